/** C0 controls, DEL and C1 controls: everything but printable ASCII and U+00A0 onwards. */
const controls = /[^\x20-\x7e\xa0-\u{10ffff}]/gu
const anyControl = /[^\x20-\x7e\xa0-\u{10ffff}]/u
/** DEL and C1: the controls JSON.stringify leaves raw (it escapes C0 itself). */
const rawInJson = /[\x7f-\x9f]/g

const hex2 = (char: string) => char.charCodeAt(0).toString(16).padStart(2, '0')

/**
 * `text` with every control character written out as `\xHH`, for a terminal or a page to
 * print rather than act on: a logged field (a tenant's name, a request id) could otherwise
 * carry an escape sequence to an operator's terminal. Tab and newline too: a cell is one line.
 */
export function escapeControls(text: string): string {
  return text.replace(controls, (char) => `\\x${hex2(char)}`)
}

/** Whether `text` holds a control character (C0, tab and newline included, DEL, C1). */
export function hasControls(text: string): boolean {
  return anyControl.test(text)
}

/**
 * JSON text (or YAML in double quotes, which escapes as JSON does) with DEL and C1 escaped
 * as `\u00HH`: the same value, and nothing raw for a terminal to act on.
 */
export function escapeControlsInJson(text: string): string {
  return text.replace(rawInJson, (char) => `\\u00${hex2(char)}`)
}
