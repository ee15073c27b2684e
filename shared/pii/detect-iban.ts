import { isWordChar, type PiiSpan } from './pii-span.ts'

/**
 * IBAN length per country (ISO 13616 registry, SWIFT release of 2024). A candidate must
 * have exactly its country's length and pass the mod-97 check (ISO 7064), so a random
 * string of the right shape passes about once in 97 and only with a real country code.
 */
const ibanLengths: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HN: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
}

/** Country code and check digits; the rest is read by hand, bounded by the country length. */
const start = /[A-Za-z]{2}\d{2}/g

export function detectIbans(text: string): PiiSpan[] {
  const spans: PiiSpan[] = []
  start.lastIndex = 0
  for (let match = start.exec(text); match !== null; match = start.exec(text)) {
    // Checked here, not by a lookbehind: a leading lookbehind makes V8 try every position.
    if (isWordChar(text, match.index - 1)) continue
    const country = match[0].slice(0, 2).toUpperCase()
    const length = ibanLengths[country]
    if (length === undefined) continue
    const end = readIban(text, match.index, length)
    if (end !== undefined) {
      spans.push({ type: 'iban', start: match.index, end })
      start.lastIndex = end
    }
  }
  return spans
}

/**
 * An IBAN-shaped head ends right before `start`: a registered country code, two digits and
 * up to seven groups of four letters or digits ("NL02 BARC "). The digits after it belong
 * to an IBAN that failed mod-97 (a typo, or not an IBAN at all), so they are neither a
 * phone nor a card number. Only the 40 characters before are read: bounded work per call.
 */
const ibanHead = /(?:^|[^A-Za-z0-9])([A-Z]{2})\d{2}(?:[ -]?[A-Z0-9]{4}){0,7}[ -]$/

export function followsIbanHead(text: string, start: number): boolean {
  const head = ibanHead.exec(text.slice(Math.max(0, start - 40), start))
  return head !== null && ibanLengths[head[1] as string] !== undefined
}

/**
 * Reads `length` letters and digits from `from`, allowing a single space or dash between
 * groups as IBANs are printed ("DE89 3704 0044 0532 0130 00"), all upper or all lower
 * case. Returns where the IBAN ends when it is complete, ends at a word boundary, and
 * passes mod-97.
 */
function readIban(text: string, from: number, length: number): number | undefined {
  let compact = ''
  let i = from
  let separator: string | undefined
  while (compact.length < length && i < text.length) {
    const c = text.charAt(i)
    if (isWordChar(text, i) && c !== '_') {
      compact += c
      i++
    } else if ((c === ' ' || c === '-') && compact.length >= 4 && isWordChar(text, i + 1)) {
      if (separator !== undefined && c !== separator) return undefined
      separator = c
      i++
    } else break
  }
  if (compact.length !== length || isWordChar(text, i)) return undefined
  if (compact !== compact.toUpperCase() && compact !== compact.toLowerCase()) return undefined
  return ibanChecksumValid(compact.toUpperCase()) ? i : undefined
}

/** ISO 7064 mod 97-10 over the rearranged IBAN, in chunks so no big integers are needed. */
export function ibanChecksumValid(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban)) return false
  const rearranged = iban.slice(4) + iban.slice(0, 4)
  let remainder = 0
  for (let i = 0; i < rearranged.length; i++) {
    const c = rearranged.charCodeAt(i)
    const value = c <= 57 ? c - 48 : c - 55 // '0'-'9' -> 0-9, 'A'-'Z' -> 10-35
    remainder = value < 10 ? (remainder * 10 + value) % 97 : (remainder * 100 + value) % 97
  }
  return remainder === 1
}
