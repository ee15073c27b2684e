import { isWordChar, type PiiSpan } from './pii-span.ts'

/**
 * Credentials with a recognisable shape. Each alternative starts with a fixed prefix and
 * has a bounded length, so the scan stays linear; a start inside a longer token is
 * rejected in code (a leading lookbehind would make V8 try every position).
 * - AWS access key ids: AKIA (long-term) or ASIA (temporary) and the other IAM unique-id
 *   prefixes, then 16 characters of AWS's base32 alphabet (A-Z, 2-7).
 * - GitHub (ghp_, gho_, ghu_, ghs_, ghr_ + 36; github_pat_ + 82), Slack (xoxb-, xoxp-, ...),
 *   Stripe (sk_live_, rk_test_, ...), Google API keys (AIza + 35), OpenAI/Anthropic-style
 *   sk- keys, and this project's own kinf_<id>_<secret> keys.
 */
const tokens =
  /(?:(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z2-7]{16}(?![A-Za-z0-9])|gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9_])|github_pat_[A-Za-z0-9_]{82}(?![A-Za-z0-9_])|xox[abposr]-[A-Za-z0-9-]{10,250}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,250}|AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])|sk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_-]{32,250}|kinf_[a-z0-9]{4,32}_[A-Za-z0-9_-]{22,128}(?![A-Za-z0-9_-]))/g

/** A PEM private key (PKCS#1, PKCS#8, EC, OpenSSH, encrypted, PGP). */
const pemBegin = /-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY( BLOCK)?-----/g

/**
 * A JWT: three base64url parts, the header a JSON object naming its "alg". The regex takes
 * the whole dotted token (it cannot fail once started, so it never rescans); the parts
 * are checked in code.
 */
const jwt = /eyJ[A-Za-z0-9_.-]*/g

/** "Bearer <token>" as in an Authorization header; the token must look random. */
const bearer = /\b[Bb]earer[ \t]+([A-Za-z0-9._~+/-]{16,4096}=*)/g

/** How far a PEM body is searched for its END line: RSA 8192-bit keys are ~6.5 KB. */
const maxPemBody = 16 * 1024

export function detectSecrets(text: string): PiiSpan[] {
  const spans: PiiSpan[] = []
  const add = (start: number, end: number) => spans.push({ type: 'secret', start, end })
  tokens.lastIndex = 0
  for (let match = tokens.exec(text); match !== null; match = tokens.exec(text)) {
    if (!startsToken(text, match.index)) continue
    add(match.index, match.index + match[0].length)
  }
  if (text.includes('-----BEGIN ')) scanPem(text, add)
  jwt.lastIndex = 0
  for (let match = jwt.exec(text); match !== null; match = jwt.exec(text)) {
    const token = match[0].replace(/\.+$/, '') // a sentence's full stop
    if (startsToken(text, match.index) && text.charAt(match.index - 1) !== '.' && isJwt(token)) {
      add(match.index, match.index + token.length)
    }
  }
  bearer.lastIndex = 0
  for (let match = bearer.exec(text); match !== null; match = bearer.exec(text)) {
    const token = match[1] ?? ''
    const end = match.index + match[0].length
    if (looksRandom(token)) add(end - token.length, end)
  }
  return spans
}

function startsToken(text: string, index: number): boolean {
  return !isWordChar(text, index - 1) && text.charAt(index - 1) !== '-'
}

function scanPem(text: string, add: (start: number, end: number) => void): void {
  pemBegin.lastIndex = 0
  for (let match = pemBegin.exec(text); match !== null; match = pemBegin.exec(text)) {
    const endMarker = `-----END ${match[1] ?? ''}PRIVATE KEY${match[2] ?? ''}-----`
    const bodyStart = match.index + match[0].length
    // Searched in a bounded window: many unterminated headers must not rescan the text.
    const window = text.slice(bodyStart, bodyStart + maxPemBody + endMarker.length)
    const found = window.indexOf(endMarker)
    const end = found < 0 ? -1 : bodyStart + found
    // An unterminated block still leaks key material: it is claimed up to its header.
    const stop = end >= 0 ? end + endMarker.length : bodyStart
    add(match.index, stop)
    pemBegin.lastIndex = stop
  }
}

/** Header and payload decode to JSON objects; the header names an algorithm. */
export function isJwt(candidate: string): boolean {
  const parts = candidate.split('.')
  if (parts.length !== 3) return false
  const [header = '', payload = ''] = parts
  const decodedHeader = decodeJsonObject(header)
  if (decodedHeader === undefined || typeof decodedHeader.alg !== 'string') return false
  return payload === '' || decodeJsonObject(payload) !== undefined
}

function decodeJsonObject(part: string): Record<string, unknown> | undefined {
  if (part.length > 8192) return undefined
  const text = base64UrlToLatin1(part)
  if (text === undefined) return undefined
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** Bytes as Latin-1 characters: JSON syntax is ASCII, which is all the check needs. */
function base64UrlToLatin1(part: string): string | undefined {
  if (part.length % 4 === 1) return undefined
  let bits = 0
  let value = 0
  const bytes: number[] = []
  for (let i = 0; i < part.length; i++) {
    const digit = alphabet.indexOf(part.charAt(i))
    if (digit < 0) return undefined
    value = (value << 6) | digit
    bits += 6
    if (bits >= 8) {
      bits -= 8
      bytes.push((value >> bits) & 0xff)
    }
  }
  return String.fromCharCode(...bytes)
}

/** A token, not prose: letters and digits mixed (a bearer of English words is no secret). */
function looksRandom(token: string): boolean {
  return /\d/.test(token) && /[A-Za-z]/.test(token) && !/^\d+(?:\.\d+)*$/.test(token)
}
