import { followsIbanHead } from './detect-iban.ts'
import { forEachMatchInRuns, type NumericRun, numericRuns } from './numeric-runs.ts'
import type { PiiSpan } from './pii-span.ts'

/**
 * Payment cards: 12 to 19 digits, plain or printed in groups of 4 to 6 (Amex and Diners
 * 4-6-5 / 4-6-4) with a shorter last group, one kind of separator (space, dash or dot);
 * the prefix is an
 * issuer (IIN) range of a scheme that issues that length, and the Luhn checksum holds.
 * The group shapes are in the regex so a long run of small numbers ("12 345 6789 ...")
 * fails fast at every position.
 */
const candidate =
  /(?<![\w.-])(?:\d{12,19}|\d{4,6}(?:[ .-]\d{4,6}){1,3}(?:[ .-]\d{1,6})?)(?![\w-]|\.\d)/g

interface IinRange {
  /** Inclusive prefix range, compared on the first `from.length` digits. */
  from: string
  to: string
  lengths: readonly number[]
}

const l16to19 = [16, 17, 18, 19]
const l12to19 = [12, 13, 14, 15, 16, 17, 18, 19]
/** ISO/IEC 7812 issuer ranges of the major schemes (public scheme documentation). */
const iinRanges: readonly IinRange[] = [
  { from: '4', to: '4', lengths: [13, 16, 19] }, // Visa
  { from: '51', to: '55', lengths: [16] }, // Mastercard
  { from: '2221', to: '2720', lengths: [16] }, // Mastercard 2-series
  { from: '34', to: '34', lengths: [15] }, // American Express
  { from: '37', to: '37', lengths: [15] },
  { from: '300', to: '305', lengths: [14, 15, 16, 17, 18, 19] }, // Diners Club
  { from: '36', to: '36', lengths: [14, 15, 16, 17, 18, 19] },
  { from: '38', to: '39', lengths: [14, 15, 16, 17, 18, 19] },
  { from: '6011', to: '6011', lengths: l16to19 }, // Discover
  { from: '644', to: '649', lengths: l16to19 },
  { from: '65', to: '65', lengths: l16to19 },
  { from: '3528', to: '3589', lengths: l16to19 }, // JCB
  { from: '1800', to: '1800', lengths: [15] }, // JCB, legacy 15-digit
  { from: '2131', to: '2131', lengths: [15] },
  { from: '62', to: '62', lengths: l16to19 }, // UnionPay
  { from: '2200', to: '2204', lengths: l16to19 }, // Mir
  { from: '50', to: '50', lengths: l12to19 }, // Maestro (12 to 19 digits)
  { from: '56', to: '69', lengths: l12to19 },
  { from: '60', to: '60', lengths: [16] }, // RuPay
  { from: '81', to: '82', lengths: [16] },
]

export function detectCards(
  text: string,
  runs: readonly NumericRun[] = numericRuns(text),
): PiiSpan[] {
  const spans: PiiSpan[] = []
  forEachMatchInRuns(text, runs, 12, candidate, (match, start, end) => {
    const raw = match[0]
    const digits = raw.replace(/[ .-]/g, '')
    if (digits.length < 12 || digits.length > 19 || !isGroupedLikeACard(raw)) return
    if (!luhnValid(digits) || followsIbanHead(text, start)) return
    if (isCardNumber(digits) || hasCardContext(text, start))
      spans.push({ type: 'card', start, end })
  })
  return spans
}

/**
 * A Luhn-valid number outside the issuer table is still claimed when the text calls it a
 * card: ranges get reassigned, and a mistyped or unusual card is still a card to whoever
 * reads the prompt.
 */
const cardWords = /\b(?:card|credit|debit|cc|visa|mastercard|amex|maestro|jcb|payment|pan)\b/i
const contextBefore = 48

function hasCardContext(text: string, start: number): boolean {
  return cardWords.test(text.slice(Math.max(0, start - contextBefore), start))
}

/** Digits only: an issuer range that issues this length, and a valid Luhn checksum. */
export function isCardNumber(digits: string): boolean {
  if (!/^\d{12,19}$/.test(digits)) return false
  const issued = iinRanges.some((range) => {
    const prefix = digits.slice(0, range.from.length)
    return prefix >= range.from && prefix <= range.to && range.lengths.includes(digits.length)
  })
  return issued && luhnValid(digits)
}

export function luhnValid(digits: string): boolean {
  let sum = 0
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

/**
 * Printed cards group digits in fours (Amex and Diners 4-6-5 / 4-6-4): one kind of
 * separator, groups of 4 to 6 digits, the last one 1 to 6. Anything else is some other
 * number that happens to have enough digits.
 */
function isGroupedLikeACard(raw: string): boolean {
  const separators = raw.match(/[ .-]/g)
  if (separators === null) return true
  if (separators.some((s) => s !== separators[0])) return false
  const groups = raw.split(separators[0] as string)
  return groups.every((group, i) =>
    i === groups.length - 1 ? group.length <= 6 : group.length >= 4 && group.length <= 6,
  )
}
