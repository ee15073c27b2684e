/** The structured PII the built-in detectors claim; each becomes the label `pii:<type>`. */
export const piiTypes = ['email', 'phone', 'card', 'iban', 'ssn', 'ip', 'secret'] as const
export type PiiType = (typeof piiTypes)[number]

/** Where a detector found something: UTF-16 offsets into the scanned text, end exclusive. */
export interface PiiSpan {
  /** A PiiType, or a custom pattern's label. */
  type: string
  start: number
  end: number
}

/** True when the code unit at `index` is an ASCII letter, digit or underscore. */
export function isWordChar(text: string, index: number): boolean {
  const c = text.charCodeAt(index)
  return (
    (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 // _
  )
}

export function isDigit(text: string, index: number): boolean {
  const c = text.charCodeAt(index)
  return c >= 48 && c <= 57
}
