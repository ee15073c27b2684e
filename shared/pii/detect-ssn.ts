import { forEachMatchInRuns, type NumericRun, numericRuns } from './numeric-runs.ts'
import type { PiiSpan } from './pii-span.ts'

/**
 * US Social Security numbers written AAA-GG-SSSS (or with spaces or dots, the same
 * separator twice, as Presidio requires). Bare nine-digit runs are not claimed: without
 * separators they are indistinguishable from any other nine-digit number.
 */
const candidate = /(?<![\w.-])(\d{3})([- .])(\d{2})\2(\d{4})(?![\w-]|\.\d)/g

export function detectSsns(
  text: string,
  runs: readonly NumericRun[] = numericRuns(text),
): PiiSpan[] {
  const spans: PiiSpan[] = []
  forEachMatchInRuns(text, runs, 11, candidate, (match, start, end) => {
    const [, area = '', , group = '', serial = ''] = match
    if (isValidSsn(area, group, serial)) spans.push({ type: 'ssn', start, end })
  })
  return spans
}

/**
 * Presidio's rejections (all digits equal, group 00, serial 0000, area 000 or 666, the
 * well-known 123-45-6789, 078-05-1120 and 987-65-432x) plus areas 900-999, which the SSA
 * never assigns (ITINs and advertising numbers live there).
 */
export function isValidSsn(area: string, group: string, serial: string): boolean {
  const digits = area + group + serial
  if (/^(\d)\1{8}$/.test(digits)) return false
  if (area === '000' || area === '666' || area >= '900') return false
  if (group === '00' || serial === '0000') return false
  return digits !== '123456789' && digits !== '078051120'
}
