import type { PiiSpan } from './pii-span.ts'

/**
 * IPv4 in dotted quads with octets 0-255 and no leading zeros (01.02.03.04 is more likely
 * a date or a version than an address), not inside a longer dotted run (1.2.3.4.5).
 */
const ipv4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)/g
/**
 * IPv6 candidates: hex groups joined by colons, optionally ending in a dotted quad
 * (::ffff:192.0.2.1). Each repetition starts with a colon, so the scan stays linear; the
 * structure (one "::" at most, eight groups in all) is checked by hand.
 */
const ipv6 = /(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\.\d{1,3}){0,3}(?![\w:])/g

export function detectIps(text: string): PiiSpan[] {
  const v6: PiiSpan[] = []
  ipv6.lastIndex = 0
  for (let match = ipv6.exec(text); match !== null; match = ipv6.exec(text)) {
    if (isIpv6(match[0])) {
      v6.push({ type: 'ip', start: match.index, end: match.index + match[0].length })
    }
  }
  const spans: PiiSpan[] = []
  let next = 0 // the first IPv6 span that may still contain a later IPv4 match
  ipv4.lastIndex = 0
  for (let match = ipv4.exec(text); match !== null; match = ipv4.exec(text)) {
    while (next < v6.length && (v6[next] as PiiSpan).end <= match.index)
      spans.push(v6[next++] as PiiSpan)
    // The dotted tail of ::ffff:192.0.2.1 is part of the IPv6 address, not a second one.
    const inside = next < v6.length && (v6[next] as PiiSpan).start <= match.index
    if (!inside && isIpv4(match[0])) {
      spans.push({ type: 'ip', start: match.index, end: match.index + match[0].length })
    }
  }
  while (next < v6.length) spans.push(v6[next++] as PiiSpan)
  return spans
}

export function isIpv4(text: string): boolean {
  const octets = text.split('.')
  return (
    octets.length === 4 && octets.every((o) => /^(?:0|[1-9]\d{0,2})$/.test(o) && Number(o) <= 255)
  )
}

/**
 * RFC 4291 text forms: eight groups, or fewer with one "::", the last two groups possibly
 * written as a dotted quad. Loopback-only forms such as "::1" and tokens without a digit
 * ("add::beef", C++ "a::b") are not claimed: they name no one.
 */
export function isIpv6(text: string): boolean {
  if (!/\d/.test(text)) return false
  let head = text
  let groupsOfTail = 0
  const lastColon = text.lastIndexOf(':')
  const tail = text.slice(lastColon + 1)
  if (tail.includes('.')) {
    if (!isIpv4(tail)) return false
    head = text.slice(0, lastColon + 1)
    groupsOfTail = 2
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1)
  } else if (tail.length === 0 && !text.endsWith('::')) return false
  const halves = head.split('::')
  if (halves.length > 2) return false
  const groups = halves.flatMap((half) => (half === '' ? [] : half.split(':')))
  if (!groups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false
  const total = groups.length + groupsOfTail
  if (halves.length === 1) return total === 8
  return total <= 7 && total >= 2
}
