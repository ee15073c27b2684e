/**
 * Text as the detectors should read it, whatever formatting hides its shape: a model reads
 * "4111 1111 1111 1111" with no-break spaces, full-width digits or a zero-width space
 * inside as the same card number, so the scan must too.
 *
 * - NFKC: full-width and other compatibility forms become their plain forms (１２３ → 123,
 *   no-break and narrow no-break spaces → space, ｅｘａｍｐｌｅ → example);
 * - format characters (zero-width space and joiners, soft hyphen, word joiner, BOM, bidi
 *   controls), combining marks and control characters other than tab and line breaks are
 *   removed: they change nothing a reader sees between two digits or around an "@";
 * - every other Unicode space becomes a space and every dash (and the minus sign) a "-",
 *   the separators the detectors know.
 *
 * Plain printable ASCII, most prompts, is returned as is without a copy.
 */
export function normalizeForScan(text: string): string {
  if (plainAscii.test(text)) return text
  return text.normalize('NFKC').replace(removed, '').replace(spaces, ' ').replace(dashes, '-')
}

const plainAscii = /^[\x20-\x7e\t\n\r]*$/
/** Format characters, combining marks, C0/C1 controls but tab, LF and CR, and DEL. */
const removed = /[\p{Cf}\p{Mn}\p{Me}]|(?![\t\n\r])\p{Cc}/gu
/** Unicode spaces, and the line and paragraph separators. */
const spaces = /[\p{Zs}\u2028\u2029]/gu
/** Dash punctuation, the minus sign and the hyphen bullet. */
const dashes = /[\p{Pd}\u2212\u2043]/gu
