import type { PiiSpan } from './pii-span.ts'

/**
 * E-mail addresses, found from each "@" by hand (a regex that grows the local part to the
 * left would go quadratic on long runs of letters without an "@"). Verified structure:
 *
 * - local part: 1-64 characters of RFC 5322 dot-atoms (letters, digits, !#$%&'*+/=?^_`{|}~-
 *   and dots), not starting or ending with a dot, no "..", at least one letter or digit;
 * - domain: two or more labels of letters, digits and inner hyphens, 1-63 characters each,
 *   253 in all;
 * - top-level domain: 2-63 letters, or an IDN "xn--" label. No list of TLDs is embedded or
 *   fetched: a list goes stale as TLDs are added, and claiming an address on an unknown
 *   TLD only keeps a request in the cluster, while missing one would let it out.
 *
 * Quoted local parts, IP-literal domains and non-ASCII addresses are not claimed.
 */
const localChars = new Uint8Array(128)
const domainChars = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-') {
  localChars[c.charCodeAt(0)] = 1
  domainChars[c.charCodeAt(0)] = 1
}
for (const c of "!#$%&'*+/=?^_`{|}~") localChars[c.charCodeAt(0)] = 1
const isLocalChar = (code: number) => code < 128 && localChars[code] === 1
const isDomainChar = (code: number) => code < 128 && domainChars[code] === 1

export function detectEmails(text: string): PiiSpan[] {
  const spans: PiiSpan[] = []
  let consumedUpTo = 0
  for (
    let position = text.indexOf('@');
    position >= 0;
    position = text.indexOf('@', position + 1)
  ) {
    let start = position
    // The local part is at most 64 characters: looking further left proves nothing.
    const leftLimit = Math.max(consumedUpTo, position - 65)
    while (start > leftLimit && isLocalChar(text.charCodeAt(start - 1))) start--
    let end = position + 1
    const rightLimit = Math.min(text.length, position + 1 + 254)
    while (end < rightLimit && isDomainChar(text.charCodeAt(end))) end++
    // A sentence may end right after the address; the domain cannot end in a dot or dash.
    while (end > position + 1 && (text.charAt(end - 1) === '.' || text.charAt(end - 1) === '-'))
      end--
    if (start === position || end === position + 1) continue
    while (start < position && text.charAt(start) === '.') start++
    const local = text.slice(start, position)
    const domain = text.slice(position + 1, end)
    if (start === position - 65 || !isEmailLocalPart(local) || !isEmailDomain(domain)) continue
    spans.push({ type: 'email', start, end })
    consumedUpTo = end
  }
  return spans
}

export function isEmailLocalPart(local: string): boolean {
  return (
    local.length >= 1 &&
    local.length <= 64 &&
    !local.startsWith('.') &&
    !local.endsWith('.') &&
    !local.includes('..') &&
    /[A-Za-z0-9]/.test(local)
  )
}

export function isEmailDomain(domain: string): boolean {
  if (domain.length > 253) return false
  const labels = domain.split('.')
  if (labels.length < 2) return false
  const tld = labels[labels.length - 1] as string
  if (!/^(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/.test(tld)) return false
  return labels.every((label) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label))
}
