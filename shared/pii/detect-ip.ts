import { forEachMatchInRuns, type NumericRun, numericRuns } from './numeric-runs.ts'
import { isWordChar, type PiiSpan } from './pii-span.ts'

/**
 * IPv4 in dotted quads with octets 0-255 and no leading zeros (01.02.03.04 is more likely
 * a date or a version than an address), not inside a longer dotted run (1.2.3.4.5).
 */
const ipv4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)/g
/** Longest IPv6 text form: eight four-digit groups, or six and a dotted quad (45). */
const maxIpv6Length = 45

export function detectIps(
  text: string,
  runs: readonly NumericRun[] = numericRuns(text),
): PiiSpan[] {
  const v6 = detectIpv6(text)
  const spans: PiiSpan[] = []
  let next = 0 // the first IPv6 span that may still contain a later IPv4 match
  forEachMatchInRuns(text, runs, 7, ipv4, (match, start, end) => {
    while (next < v6.length && (v6[next] as PiiSpan).end <= start) spans.push(v6[next++] as PiiSpan)
    // The dotted tail of ::ffff:192.0.2.1 is part of the IPv6 address, not a second one.
    const inside = next < v6.length && (v6[next] as PiiSpan).start <= start
    if (!inside && isIpv4(match[0])) spans.push({ type: 'ip', start, end })
  })
  while (next < v6.length) spans.push(v6[next++] as PiiSpan)
  return spans
}

/**
 * From each colon, by hand: the run of hex digits, colons and dots around it (at most 45
 * characters each way, never back over the previous run), then the RFC 4291 check. Each
 * character is looked at a bounded number of times, whatever the input.
 */
function detectIpv6(text: string): PiiSpan[] {
  const spans: PiiSpan[] = []
  let scannedTo = 0
  for (let colon = text.indexOf(':'); colon >= 0; colon = text.indexOf(':', scannedTo)) {
    let start = colon
    const leftLimit = Math.max(scannedTo, colon - maxIpv6Length)
    while (start > leftLimit && isIpv6Char(text.charCodeAt(start - 1))) start--
    let end = colon + 1
    const rightLimit = Math.min(text.length, colon + maxIpv6Length + 1)
    while (end < rightLimit && isIpv6Char(text.charCodeAt(end))) end++
    scannedTo = end
    while (end > colon + 1 && text.charAt(end - 1) === '.') end-- // a sentence's full stop
    if (isWordChar(text, start - 1) || isIpv6Char(text.charCodeAt(start - 1))) continue
    if (isWordChar(text, end) || (isIpv6Char(text.charCodeAt(end)) && text.charAt(end) !== '.'))
      continue
    const candidate = text.slice(start, end)
    if (end - start <= maxIpv6Length && isIpv6(candidate)) spans.push({ type: 'ip', start, end })
  }
  return spans
}

function isIpv6Char(c: number): boolean {
  return (c >= 48 && c <= 58) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102) || c === 46 // 0-9 : A-F a-f .
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
