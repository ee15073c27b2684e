import { z } from 'zod'
import { isCardNumber, luhnValid } from '../../../shared/pii/detect-card.ts'
import { ibanChecksumValid } from '../../../shared/pii/detect-iban.ts'
import { detectPii } from '../../../shared/pii/detect-pii.ts'
import type { PiiType } from '../../../shared/pii/pii-span.ts'

/** One sample of presidio-research's synthetic dataset (data/synth_dataset_v2.json). */
export const PresidioSample = z.object({
  full_text: z.string(),
  /** The generator's sentence template; the held-out split is by template (split-presidio.ts). */
  template_id: z.int().optional(),
  spans: z.array(
    z.object({
      entity_type: z.string(),
      entity_value: z.string(),
      start_position: z.int().min(0),
      end_position: z.int().min(0),
    }),
  ),
})
export type PresidioSample = z.infer<typeof PresidioSample>
export const PresidioDataset = z.array(PresidioSample)

/** Presidio's entity types that a built-in detector claims, and the type it claims them as. */
export const claimedEntities = {
  CREDIT_CARD: 'card',
  EMAIL_ADDRESS: 'email',
  PHONE_NUMBER: 'phone',
  IBAN_CODE: 'iban',
  US_SSN: 'ssn',
  IP_ADDRESS: 'ip',
} as const satisfies Record<string, PiiType>

export interface Score {
  /** Samples (requests) or spans. */
  truePositives: number
  falsePositives: number
  falseNegatives: number
  precision: number
  recall: number
}

export interface TypeReport {
  entity: string
  type: PiiType
  /** Samples carrying the entity. */
  samples: number
  request: Score
  /** Labelled spans overlapped by a detected span of the type (recall), and vice versa. */
  span: Score
  /** Labelled spans whose boundaries the detector reproduces exactly. */
  exactSpans: number
  /** Up to 20 texts of each kind, for inspection. */
  missed: string[]
  falseAlarms: string[]
}

export interface DatasetReport {
  samples: number
  types: TypeReport[]
  /** `pii` over the claimed types: positive = carries any claimed entity. */
  overall: Score
  /** Labels that are wrong by the entity's own definition; reported, not learnt from. */
  labelProblems: string[]
}

function score(truePositives: number, falsePositives: number, falseNegatives: number): Score {
  const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b)
  return {
    truePositives,
    falsePositives,
    falseNegatives,
    precision: ratio(truePositives, truePositives + falsePositives),
    recall: ratio(truePositives, truePositives + falseNegatives),
  }
}

/**
 * Request level: a sample is positive for a type when it has a span of that entity, and
 * detected when `detectPii` gives it `pii:<type>`. Overall: positive when it has a span
 * of any claimed entity, detected when it gets `pii` from a built-in detector; samples
 * whose PII is all out of scope (PERSON, STREET_ADDRESS, ...) are negatives, so a label
 * on one of them is a false positive.
 */
export function evaluatePiiDataset(samples: readonly PresidioSample[]): DatasetReport {
  const detections = samples.map((sample) => detectPii(sample.full_text))
  const types = Object.entries(claimedEntities).map(([entity, type]): TypeReport => {
    let tp = 0
    let fp = 0
    let fn = 0
    let spanTp = 0
    let spanFn = 0
    let spanFp = 0
    let exactSpans = 0
    const missed: string[] = []
    const falseAlarms: string[] = []
    samples.forEach((sample, i) => {
      const gold = sample.spans.filter((span) => span.entity_type === entity)
      const found = (detections[i]?.spans ?? []).filter((span) => span.type === type)
      const labelled = detections[i]?.labels.includes(`pii:${type}`) ?? false
      if (gold.length > 0 && labelled) tp++
      else if (gold.length > 0) {
        fn++
        if (missed.length < 20) missed.push(sample.full_text)
      } else if (labelled) {
        fp++
        if (falseAlarms.length < 20) falseAlarms.push(sample.full_text)
      }
      for (const g of gold) {
        const hit = found.filter((f) => f.start < g.end_position && g.start_position < f.end)
        if (hit.length > 0) spanTp++
        else spanFn++
        if (hit.some((f) => f.start === g.start_position && f.end === g.end_position)) exactSpans++
      }
      for (const f of found) {
        if (!gold.some((g) => f.start < g.end_position && g.start_position < f.end)) spanFp++
      }
    })
    return {
      entity,
      type,
      samples: tp + fn,
      request: score(tp, fp, fn),
      span: score(spanTp, spanFp, spanFn),
      exactSpans,
      missed,
      falseAlarms,
    }
  })
  let tp = 0
  let fp = 0
  let fn = 0
  samples.forEach((sample, i) => {
    const gold = sample.spans.some((span) => span.entity_type in claimedEntities)
    const labelled = detections[i]?.labels.includes('pii') ?? false
    if (gold && labelled) tp++
    else if (gold) fn++
    else if (labelled) fp++
  })
  return {
    samples: samples.length,
    types,
    overall: score(tp, fp, fn),
    labelProblems: labelProblems(samples),
  }
}

/** Labelled values that cannot be what the label says, checked by the entity's own rules. */
function labelProblems(samples: readonly PresidioSample[]): string[] {
  const values = (entity: string) =>
    samples
      .flatMap((s) => s.spans.filter((span) => span.entity_type === entity))
      .map((s) => s.entity_value)
  const problems: string[] = []
  const cards = values('CREDIT_CARD').map((v) => v.replace(/[ -]/g, ''))
  const badLuhn = cards.filter((digits) => !/^\d+$/.test(digits) || !luhnValid(digits))
  if (badLuhn.length > 0)
    problems.push(
      `${badLuhn.length} of ${cards.length} labelled cards fail Luhn: ${badLuhn.slice(0, 5).join(', ')}`,
    )
  const offRange = cards.filter((digits) => luhnValid(digits) && !isCardNumber(digits))
  if (offRange.length > 0)
    problems.push(
      `${offRange.length} of ${cards.length} labelled cards pass Luhn but lie outside every issuer (IIN) range of their length; only the card words next to them get them claimed: ${offRange.slice(0, 5).join(', ')}`,
    )
  const ibans = values('IBAN_CODE').map((v) => v.replace(/[ -]/g, '').toUpperCase())
  const badIban = ibans.filter((iban) => !ibanChecksumValid(iban))
  if (badIban.length > 0)
    problems.push(
      `${badIban.length} of ${ibans.length} labelled IBANs fail mod-97: ${badIban.slice(0, 5).join(', ')}`,
    )
  const phones = values('PHONE_NUMBER')
  const shortPhones = phones.filter((v) => v.replace(/\D/g, '').length < 7)
  if (shortPhones.length > 0)
    problems.push(
      `${shortPhones.length} of ${phones.length} labelled phone numbers have fewer than 7 digits: ${shortPhones.slice(0, 5).join(', ')}`,
    )
  return problems
}
