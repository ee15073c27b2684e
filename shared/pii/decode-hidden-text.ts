/**
 * Text a model can read that a scan of the raw characters cannot: escapes a model decodes
 * on sight (`\u0034`, `%34`, `&#52;`) and base64 that decodes to text. Each function
 * returns what it decoded, or nothing, in time linear in the input.
 */

/** The text with JSON/JavaScript, percent and HTML numeric escapes decoded; null when it has none. */
export function escapeDecoded(text: string): string | null {
  if (!text.includes('\\') && !text.includes('%') && !text.includes('&#')) return null
  let changed = false
  const decoded = text
    .replace(backslashEscape, (whole, u4?: string, braced?: string, x2?: string) => {
      const code = Number.parseInt(u4 ?? braced ?? x2 ?? '', 16)
      if (!Number.isFinite(code) || code > 0x10ffff) return whole
      changed = true
      return String.fromCodePoint(code)
    })
    .replace(htmlEscape, (whole, decimal?: string, hex?: string) => {
      const code = decimal !== undefined ? Number(decimal) : Number.parseInt(hex ?? '', 16)
      if (!Number.isFinite(code) || code > 0x10ffff) return whole
      changed = true
      return String.fromCodePoint(code)
    })
    .replace(percentRun, (run) => {
      changed = true
      return utf8Lenient(Uint8Array.from(run.match(/%../g) ?? [], (h) => parseHex(h.slice(1))))
    })
  return changed ? decoded : null
}

const backslashEscape = /\\u([0-9a-fA-F]{4})|\\u\{([0-9a-fA-F]{1,6})\}|\\x([0-9a-fA-F]{2})/g
const htmlEscape = /&#(?:(\d{1,7})|[xX]([0-9a-fA-F]{1,6}));?/g
const percentRun = /(?:%[0-9a-fA-F]{2})+/g

function parseHex(pair: string): number {
  return Number.parseInt(pair, 16)
}

/**
 * Every run of base64 (standard or URL-safe, padded or not, possibly wrapped over lines
 * as MIME writes it) of at least 16 characters that decodes to readable text. Runs that
 * decode to binary (hashes, keys, compressed data) are left alone: a model cannot read
 * them either without tools. One pass over the characters (a regex tried at every
 * position of every word costs several times more on prose, which is most prompts).
 */
export function base64Texts(text: string): string[] {
  const found: string[] = []
  const n = text.length
  let i = 0
  while (i < n) {
    if (base64Class[text.charCodeAt(i)] !== 1) {
      i++
      continue
    }
    const start = i
    let wrapped = false
    for (;;) {
      while (i < n && base64Class[text.charCodeAt(i)] === 1) i++
      while (i < n && text.charCodeAt(i) === 0x3d) i++ // = padding
      // A line break followed by more base64 continues the run (MIME's 76-column lines).
      const next = text.charCodeAt(i) === 0x0d ? i + 1 : i
      if (text.charCodeAt(next) !== 0x0a || base64Class[text.charCodeAt(next + 1)] !== 1) break
      wrapped = true
      i = next + 1
    }
    if (i - start < minBase64Run) continue
    const run = wrapped ? text.slice(start, i).replace(/\s+/g, '') : text.slice(start, i)
    const decoded = decodeBase64Text(run)
    if (decoded !== null) found.push(decoded)
  }
  return found
}

/** Shorter runs are words, not encoded text worth decoding (12 bytes at most). */
const minBase64Run = 16
/** 1 for the characters of base64 and base64url, by UTF-16 code unit below 128. */
const base64Class = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_')
  base64Class[c.charCodeAt(0)] = 1

/** The text `run` encodes in base64, or null when it is not base64 of readable UTF-8 text. */
export function decodeBase64Text(run: string): string | null {
  const bytes = base64Bytes(run)
  if (bytes === null || bytes.length === 0) return null
  let decoded: string
  try {
    decoded = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
  } catch {
    return null
  }
  return isReadable(decoded) ? decoded : null
}

function base64Bytes(run: string): Uint8Array | null {
  const urlSafe = /[-_]/.test(run)
  if (urlSafe && /[+/]/.test(run)) return null
  let standard = (urlSafe ? run.replace(/-/g, '+').replace(/_/g, '/') : run).replace(/=+$/, '')
  if (standard.includes('=') || standard.length % 4 === 1) return null
  standard += '='.repeat((4 - (standard.length % 4)) % 4)
  try {
    const binary = atob(standard)
    return Uint8Array.from(binary, (c) => c.charCodeAt(0))
  } catch {
    return null
  }
}

/**
 * Readable: no control characters but tab and line breaks, and mostly letters, digits,
 * punctuation and spaces. Random bytes that happen to be valid UTF-8 almost never are.
 */
function isReadable(text: string): boolean {
  if (/(?![\t\n\r])\p{Cc}/u.test(text)) return false
  let plain = 0
  let all = 0
  for (const char of text) {
    all++
    if (readableChar.test(char)) plain++
  }
  return plain >= 0.9 * all
}

const readableChar = /[\p{L}\p{N}\p{P}\p{S}\p{Zs}\n\r\t]/u

function utf8Lenient(bytes: Uint8Array): string {
  return new TextDecoder('utf-8').decode(bytes)
}

/**
 * A data: URL's media type and, when its payload is readable text, that text (base64
 * decoded); `text` is null for a binary payload (an image, a PDF). Null when not a data URL.
 */
export function dataUrlOf(value: string): { mediaType: string; text: string | null } | null {
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(value.trim())
  if (!match) return null
  const mediaType = (match[1] || 'text/plain').toLowerCase()
  const body = match[3] ?? ''
  if (!/;base64/i.test(match[2] ?? '')) return { mediaType, text: escapeDecoded(body) ?? body }
  return { mediaType, text: decodeBase64Text(body.replace(/\s+/g, '')) }
}
