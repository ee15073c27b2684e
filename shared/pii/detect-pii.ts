import { type CompiledCustomPattern, detectCustom } from './custom-pii-patterns.ts'
import { detectCards } from './detect-card.ts'
import { detectEmails } from './detect-email.ts'
import { detectIbans } from './detect-iban.ts'
import { detectIps } from './detect-ip.ts'
import { detectPhones } from './detect-phone.ts'
import { detectSecrets } from './detect-secret.ts'
import { detectSsns } from './detect-ssn.ts'
import { type NumericRun, numericRuns } from './numeric-runs.ts'
import type { PiiSpan } from './pii-span.ts'

export type { CompiledCustomPattern, CustomPiiPattern } from './custom-pii-patterns.ts'
export { compileCustomPatterns } from './custom-pii-patterns.ts'
export type { PiiSpan, PiiType } from './pii-span.ts'

export interface PiiDetection {
  /** Sorted and unique: `pii`, then `pii:<type>` per type found, and custom labels. */
  labels: string[]
  /** Built-in spans never overlap one another; sorted by start. */
  spans: PiiSpan[]
}

export interface DetectPiiOptions {
  custom?: readonly CompiledCustomPattern[]
}

/**
 * The built-in detectors, most specific first: where two claim overlapping text the
 * earlier wins (a Luhn-valid card is not also a phone number, an IBAN's digits are not a
 * card, an SSN is not a phone).
 */
const detectors: readonly ((text: string, runs: readonly NumericRun[]) => PiiSpan[])[] = [
  detectSecrets,
  detectEmails,
  detectIbans,
  detectCards,
  detectSsns,
  detectIps,
  detectPhones,
]

/**
 * Scans a prompt for structured PII. Pure and linear in the text's length. Custom
 * patterns add their own label, and `pii` too when the label is in the pii group
 * (`pii:employee-id`). May throw only on a bug; the caller treats a throw as "might carry
 * any label" (fail closed).
 */
export function detectPii(text: string, options: DetectPiiOptions = {}): PiiDetection {
  let kept: PiiSpan[] = []
  const runs = numericRuns(text)
  for (const detect of detectors) kept = addWhereFree(kept, detect(text, runs))
  const labels = new Set<string>()
  if (kept.length > 0) labels.add('pii')
  for (const span of kept) labels.add(`pii:${span.type}`)
  for (const pattern of options.custom ?? []) {
    const spans = detectCustom(text, pattern)
    if (spans.length === 0) continue
    labels.add(pattern.label)
    if (pattern.label.startsWith('pii:')) labels.add('pii')
    kept.push(...spans)
  }
  return {
    labels: [...labels].sort(),
    spans: kept.sort((a, b) => a.start - b.start || a.end - b.end),
  }
}

/**
 * Merges `incoming` into `kept` (sorted, non-overlapping), dropping incoming spans that
 * overlap a kept one or an earlier incoming one. One sweep, so a prompt full of matches
 * costs linear time, not quadratic.
 */
function addWhereFree(kept: readonly PiiSpan[], incoming: PiiSpan[]): PiiSpan[] {
  if (incoming.length === 0) return kept as PiiSpan[]
  incoming.sort((a, b) => a.start - b.start || b.end - a.end)
  const merged: PiiSpan[] = []
  let k = 0
  let lastEnd = -1
  for (const span of incoming) {
    while (k < kept.length && (kept[k] as PiiSpan).end <= span.start)
      merged.push(kept[k++] as PiiSpan)
    const next = kept[k]
    if (span.start >= lastEnd && (next === undefined || next.start >= span.end)) {
      merged.push(span)
      lastEnd = span.end
    }
  }
  while (k < kept.length) merged.push(kept[k++] as PiiSpan)
  return merged
}
