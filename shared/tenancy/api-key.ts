import { KinfError } from '../errors/kinf-error.ts'

/**
 * API keys `kinf_<id>_<secret>`. The id names the key (logs, the policy's apiKeys); only
 * SHA-256 of the secret is stored. A fast hash is enough because the secret carries at
 * least 128 random bits, and it keeps Worker CPU low (see docs/edge-keys-and-errors.md §1.1).
 */

const idPattern = /^[a-z0-9]{4,32}$/
// base62 or base64url; 22 characters of either carry >= 130 bits.
const secretPattern = /^[A-Za-z0-9_-]{22,128}$/
const base62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const base36 = 'abcdefghijklmnopqrstuvwxyz0123456789'
/** 32 base62 characters: 190 bits. */
const secretLength = 32
const mintedIdLength = 12

export function parseApiKey(raw: string): { id: string; secret: string } | null {
  if (typeof raw !== 'string' || !raw.startsWith('kinf_')) return null
  const rest = raw.slice(5)
  const separator = rest.indexOf('_')
  if (separator < 0) return null
  const id = rest.slice(0, separator)
  const secret = rest.slice(separator + 1)
  return idPattern.test(id) && secretPattern.test(secret) ? { id, secret } : null
}

export async function sha256HexOf(secret: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(secret))
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/**
 * A new key from `randomBytes` (a CSPRNG: node:crypto randomBytes, crypto.getRandomValues).
 * Pass `id` to choose the key's name; by default it is random too.
 */
export function mintApiKey(
  randomBytes: (n: number) => Uint8Array,
  options: { id?: string } = {},
): { key: string; id: string; secret: string } {
  const id = options.id ?? randomString(randomBytes, base36, mintedIdLength)
  if (!idPattern.test(id)) {
    throw new KinfError(
      'invalid_request',
      `key id "${id}" must be 4 to 32 lower-case letters or digits`,
    )
  }
  const secret = randomString(randomBytes, base62, secretLength)
  return { key: `kinf_${id}_${secret}`, id, secret }
}

/**
 * Uniform characters by rejection sampling: a byte is used only below the largest multiple
 * of the alphabet's size that fits in 256, so `byte % size` favours no character.
 */
function randomString(
  randomBytes: (n: number) => Uint8Array,
  alphabet: string,
  length: number,
): string {
  const limit = 256 - (256 % alphabet.length)
  let out = ''
  for (let draws = 0; out.length < length; draws++) {
    if (draws > 64)
      throw new KinfError('internal', 'the random source keeps returning unusable bytes')
    const bytes = randomBytes(length * 2)
    for (const byte of bytes) {
      if (byte < limit) out += alphabet[byte % alphabet.length]
      if (out.length === length) break
    }
  }
  return out
}
