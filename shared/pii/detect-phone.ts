import { followsIbanHead } from './detect-iban.ts'
import { type NumericRun, numericRuns } from './numeric-runs.ts'
import type { PiiSpan } from './pii-span.ts'

/**
 * Phone numbers, international (+CC or 00CC) and national, as people write them:
 * digit groups joined by single spaces, dashes, dots or slashes, an area code possibly
 * in parentheses, a trunk "(0)" after a country code, an extension ("x123", "ext. 123").
 *
 * Candidates are the numeric runs (numeric-runs.ts); `parsePhone` then decides:
 * - international: a country code 1-9.., 8 to 15 digits in all (E.164);
 * - national, grouped: 7 to 13 digits in two or more groups of 2+ digits (a leading trunk
 *   "1" or "0" may stand alone), one kind of separator after any parenthesised area code;
 * - an ungrouped run of 7 to 13 digits only next to a word that says phone (tel, mobile,
 *   fax, call, ...): alone it is as likely an order number or an amount.
 * Never claimed: dates (2024-05-12, 12.05.2024, 12/05/2024), year ranges (1990-2000),
 * dotted quads (IP addresses), SSN-shaped 3-2-4 groups, amounts after a currency sign
 * or with decimals, thousands separated by commas, and runs glued to letters.
 * Nationally written numbers are also left alone after a word that names another kind of
 * number ("release 19.21.190", "order #357-2778-351") and after an IBAN-shaped head whose
 * checksum failed ("NL02 BARC 1626 2299 87"); a dotted one ("15.12.241") is a version
 * unless dialled with a trunk 0 or NANP-shaped (3-3-4), or next to a phone word.
 */
const extension = /^(?: ?(?:x|ext\.?|extension) ?)(\d{1,6})(?![\w])/i
/**
 * Words that say the number next to them is a phone number; "office" and the like only as a
 * field name ("Office: ..."). Contact verbs count ("ring me at", "not answering at"), and
 * "registered", which before a bare number stands for "registered number".
 */
const phoneWordsBefore =
  /\b(?:phone|tel|telephone|mobile|mob|cell|cellphone|fax|call|sms|text|whatsapp|dial|landline|hotline|ph|ring|answering|registered|(?:office|home|work|desk)\s*:)\W{0,3}[^\n\d]{0,16}$/i
const phoneWordsAfter =
  /^[\s,;(\\-]{0,3}(?:phone|tel|mobile|cell|fax|office|home|work|desk|landline)\b/i
/**
 * Words that say the number after them is something else: versions and releases, orders,
 * tickets, tracking, references. Only right before the number, so "call 555-0199 about
 * order 12" is still a phone number.
 */
const otherNumberWordsBefore =
  /\b(?:version|ver|release|build|kernel|patch|order|invoice|ticket|ref|reference|tracking|sku|serial)\.?\s*(?:no\.?|nr\.?|number|#)?\s*[#:]?\s*["']?$/i
const contextBefore = 32
const contextAfter = 16

export function detectPhones(
  text: string,
  runs: readonly NumericRun[] = numericRuns(text),
): PiiSpan[] {
  const spans: PiiSpan[] = []
  for (const run of runs) {
    const start = run.start
    // 7 to 15 digits, two more for a 00 prefix: longer runs are tables of figures.
    const digits = digitsIn(text, start, run.end)
    if (digits < 7 || digits > 17 || /[\w+./-]/.test(text.charAt(start - 1))) continue
    const raw = trimCandidate(text.slice(start, run.end))
    let end = start + raw.length
    if (isGluedToWordOrAmount(text, start, end)) continue
    const shape = parsePhone(raw)
    if (shape === 'no' || namesAnotherNumber(text, start, raw)) continue
    const ext = extension.exec(text.slice(end, end + 20))
    if (ext !== null) end += ext[0].length
    if (shape === 'needs-context' && !hasPhoneContext(text, start, end)) continue
    spans.push({ type: 'phone', start, end })
  }
  return spans
}

/** Not "+CC" nor "00CC" (as parsePhone reads them: "005-1680-632" is national). */
function isNational(raw: string): boolean {
  return !raw.startsWith('+') && !/^00(?:[17]|[2-9]\d)/.test(raw)
}

/** An IBAN head vetoes any number ("NL02 ABNA 0074 4334 88" is not +74); a word only a national one. */
function namesAnotherNumber(text: string, start: number, raw: string): boolean {
  if (followsIbanHead(text, start)) return true
  return isNational(raw) && otherNumberWordsBefore.test(text.slice(Math.max(0, start - 24), start))
}

function digitsIn(text: string, start: number, end: number): number {
  let count = 0
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i)
    if (c >= 48 && c <= 57) count++
  }
  return count
}

/** Drops trailing separators and an unmatched trailing "(" the candidate ran into. */
function trimCandidate(raw: string): string {
  let end = raw.length
  while (end > 0 && !/[\d)]/.test(raw.charAt(end - 1))) end--
  let trimmed = raw.slice(0, end)
  // Two separators in a row end the number ("555 1234  (home)" is not one number).
  const doubled = /[ ./-]{2,}|[ ./-]\(?$|\(\)/.exec(trimmed)
  if (doubled !== null) trimmed = trimmed.slice(0, doubled.index)
  if (trimmed.endsWith('(')) trimmed = trimmed.slice(0, -1)
  return trimmed
}

/** Letters, a currency sign or a decimal fraction right next to it: not a phone number. */
function isGluedToWordOrAmount(text: string, start: number, end: number): boolean {
  const before = text.slice(Math.max(0, start - 2), start)
  const after = text.slice(end, end + 2)
  if (/[$€£¥₹]\s?$/.test(before)) return true
  if (/^[A-Za-z%€$£]/.test(after) && !/^(?:x|e)/i.test(after)) return true
  return /^[.,]\d/.test(after) || /^[:]\d/.test(after)
}

type PhoneShape = 'yes' | 'needs-context' | 'no'

interface Group {
  digits: string
  parenthesised: boolean
}

/** Splits a candidate into digit groups and the separators between them; null if malformed. */
function splitGroups(raw: string): { groups: Group[]; separators: string[] } | null {
  const groups: Group[] = []
  const separators: string[] = []
  let i = 0
  for (;;) {
    const parenthesised = raw.charAt(i) === '('
    if (parenthesised) i++
    const from = i
    while (i < raw.length && isAsciiDigit(raw.charCodeAt(i))) i++
    if (i === from) return null
    groups.push({ digits: raw.slice(from, i), parenthesised })
    if (parenthesised) {
      if (raw.charAt(i) !== ')') return null
      i++
    }
    if (i >= raw.length) return { groups, separators }
    const next = raw.charAt(i)
    if (next === ')') return null
    if (next === '(' || isAsciiDigit(raw.charCodeAt(i))) {
      // "(579)888-3058", "+46(0)8": no separator, only around parentheses.
      if (next !== '(' && !parenthesised) return null
      separators.push('')
    } else {
      separators.push(next)
      i++
    }
  }
}

function isAsciiDigit(code: number): boolean {
  return code >= 48 && code <= 57
}

export function parsePhone(raw: string): PhoneShape {
  const international = raw.startsWith('+')
  const body = international ? raw.slice(1).trimStart() : raw
  const parts = splitGroups(body)
  if (parts === null) return 'no'
  const { groups, separators } = parts
  if (groups.filter((g) => g.parenthesised).length > 1) return 'no'
  const digits = groups.map((g) => g.digits).join('')
  if (
    international ||
    (/^00[1-9]/.test(digits) &&
      groups.length > 1 &&
      (groups[0]?.digits.length ?? 0) <= 5 &&
      // "005-1680-632": 1 and 7 are the only one-digit country codes.
      !/^00[02-689]$/.test(groups[0]?.digits ?? ''))
  ) {
    const significant = international ? digits : digits.slice(2)
    // Separators may mix after a country code: "+55 11 91234-5678" is how Brazil writes it.
    const valid = !significant.startsWith('0') && significant.length >= 8
    return valid && significant.length <= 15 ? 'yes' : 'no'
  }
  if (digits.length < 7 || digits.length > 13) return 'no'
  if (groups.length === 1) return 'needs-context'
  if (groups.length === 2 && !isTrunkDialled(groups)) return 'needs-context'
  if (!consistentSeparators(groups, separators)) return 'no'
  const lengths = groups.map((g) => g.digits.length)
  const trunk = /^[01]$/.test(groups[0]?.digits ?? '') && digits.length >= 10
  if (lengths.some((length, i) => length < 2 && !(i === 0 && trunk))) return 'no'
  const separator = separators.find((s) => s !== '' && s !== ' ') ?? ' '
  if (looksLikeDate(lengths, groups, separator)) return 'no'
  if (separator === '.' && !digits.startsWith('0') && lengths.join() !== '3,3,4')
    return 'needs-context'
  if (
    lengths.length === 4 &&
    separator === '.' &&
    groups.every((g) => Number(g.digits) <= 255 && g.digits.length <= 3)
  )
    return 'no'
  if (lengths.join() === '3,2,4' && separators.every((s) => s === separators[0])) return 'no'
  // 4-2-4 is dialled only with a trunk 0 (Japan's "0120-12-3456"); else an id or licence number.
  if (lengths.join() === '4,2,4' && !digits.startsWith('0')) return 'needs-context'
  // "12 500 000": a round amount with thousands separated by spaces.
  if (lengths.slice(1).every((length) => length === 3) && digits.endsWith('000')) return 'no'
  return 'yes'
}

/**
 * Two groups ("370 3911") are as often a house and street number or a postcode as a
 * phone number, unless dialled nationally with the trunk 0 and a full subscriber number
 * ("0341 8387176") or with the area code in parentheses.
 */
function isTrunkDialled(groups: Group[]): boolean {
  const digits = groups.map((g) => g.digits).join('')
  return (digits.startsWith('0') && digits.length >= 10) || groups[0]?.parenthesised === true
}

/** One kind of separator between the groups, not counting those around parentheses. */
function consistentSeparators(groups: Group[], separators: string[]): boolean {
  const kinds = new Set(
    separators.filter(
      (s, i) => s !== '' && !groups[i]?.parenthesised && !groups[i + 1]?.parenthesised,
    ),
  )
  return kinds.size <= 1
}

function looksLikeDate(lengths: number[], groups: Group[], separator: string): boolean {
  const values = groups.map((g) => Number(g.digits))
  const [a = 0, b = 0, c = 0] = values
  const shape = lengths.join()
  if (shape === '4,4') return a >= 1800 && a <= 2100 && b >= 1800 && b <= 2100
  if (separator === ' ' || lengths.length !== 3) return false
  const isDay = (n: number) => n >= 1 && n <= 31
  const isMonth = (n: number) => n >= 1 && n <= 12
  if (shape === '4,2,2') return isMonth(b) && isDay(c)
  if (shape === '2,2,4') return (isDay(a) && isMonth(b)) || (isMonth(a) && isDay(b))
  return false
}

function hasPhoneContext(text: string, start: number, end: number): boolean {
  const before = text.slice(Math.max(0, start - contextBefore), start)
  const after = text.slice(end, end + contextAfter)
  return phoneWordsBefore.test(before) || phoneWordsAfter.test(after)
}
