import { detectPii } from '../../../shared/pii/detect-pii.ts'
import { scanRequestPii } from '../../../shared/pii/scan-request-pii.ts'
import { claimedEntities, type PresidioSample } from './evaluate-pii-dataset.ts'

/**
 * Ways real text and an evader write the same value (docs/pii.md, "What leaves"): each
 * applied to a sample's labelled values, or (base64, JSON escapes) to its whole text.
 */
const disguises: Record<string, { value?: (v: string) => string; text?: (t: string) => string }> = {
  'no-break spaces': { value: (v) => v.replaceAll(' ', '\u00a0') },
  'narrow no-break spaces': { value: (v) => v.replaceAll(' ', '\u202f') },
  'full-width characters': {
    value: (v) => v.replace(/[0-9A-Za-z@.]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)),
  },
  'en dashes': { value: (v) => v.replaceAll('-', '\u2013') },
  'zero-width spaces': { value: (v) => [...v].join('\u200b') },
  'soft hyphens': { value: (v) => [...v].join('\u00ad') },
  base64: { text: (t) => btoa(String.fromCharCode(...new TextEncoder().encode(t))) },
  'JSON escapes': {
    text: (t) =>
      JSON.stringify({ note: t }).replace(/[0-9@]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`),
  },
}

const chat = (text: string) => ({ model: 'm', messages: [{ role: 'user', content: text }] })
const labelled = (text: string) =>
  scanRequestPii([chat(text)], { budget: 4 * text.length + 65_536 })

function isPositive(sample: PresidioSample): boolean {
  return sample.spans.some((span) => span.entity_type in claimedEntities)
}

/** The sample with every claimed value (or its whole text) written the disguise's way. */
function disguised(sample: PresidioSample, name: string): string {
  const disguise = disguises[name] ?? {}
  let text = sample.full_text
  if (disguise.value) {
    const spans = sample.spans
      .filter((span) => span.entity_type in claimedEntities)
      .sort((a, b) => b.start_position - a.start_position)
    for (const span of spans)
      text =
        text.slice(0, span.start_position) +
        disguise.value(text.slice(span.start_position, span.end_position)) +
        text.slice(span.end_position)
  }
  return disguise.text ? disguise.text(text) : text
}

/**
 * The request scan the edge runs (shared/pii/scan-request-pii.ts: decoding and
 * normalisation before the detectors) against the detectors alone, per corpus: samples
 * whose `pii` label the scan adds or drops on the plain text (on negatives and decoys an
 * addition is a false alarm), and, with each disguise, the positives still labelled `pii`
 * by the detectors alone and by the scan.
 */
export function formatRequestScan(corpora: Record<string, readonly PresidioSample[]>): string {
  const names = Object.keys(disguises)
  const lines = [
    `| corpus | positives | negatives | scan adds pii (negatives) | scan drops pii | ${names.map((n) => `${n}: detectors / scan`).join(' | ')} |`,
    `|---|---:|---:|---:|---:|${names.map(() => '---:').join('|')}|`,
  ]
  for (const [corpus, samples] of Object.entries(corpora)) {
    const positives = samples.filter(isPositive)
    let added = 0
    let dropped = 0
    for (const sample of samples) {
      const alone = detectPii(sample.full_text).labels.includes('pii')
      const scanned = labelled(sample.full_text).labels.includes('pii')
      if (scanned && !alone && !isPositive(sample)) added++
      if (alone && !scanned) dropped++
    }
    const recall = names.map((name) => {
      let detectors = 0
      let scan = 0
      for (const sample of positives) {
        const text = disguised(sample, name)
        if (detectPii(text).labels.includes('pii')) detectors++
        if (labelled(text).labels.includes('pii')) scan++
      }
      return `${detectors} / ${scan}`
    })
    lines.push(
      `| ${corpus} | ${positives.length} | ${samples.length - positives.length} | ${added} | ${dropped} | ${recall.join(' | ')} |`,
    )
  }
  return `${lines.join('\n')}\n`
}
