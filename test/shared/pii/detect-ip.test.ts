import { describe, expect, it } from 'vitest'
import { detectIps, isIpv6 } from '../../../shared/pii/detect-ip.ts'

const found = (text: string) => detectIps(text).map((s) => text.slice(s.start, s.end))

describe('detectIps', () => {
  it.each(['192.168.1.20', '8.8.8.8', '255.255.255.255', '0.0.0.0'])('finds IPv4 %s', (ip) => {
    expect(found(`from ${ip}.`)).toEqual([ip])
  })

  it.each(['256.1.1.1', '1.2.3', '01.02.03.04', '1.2.3.4.5', 'v1.2.3.4', '1.2.3.4a'])(
    'rejects %s',
    (text) => {
      expect(found(`see ${text} here`)).toEqual([])
    },
  )

  it.each([
    '2001:0db8:85a3:0000:0000:8a2e:0370:7334',
    '2001:db8:85a3::8a2e:370:7334',
    'fe80::1',
    '2001:db8::',
    '::ffff:192.0.2.128',
    '64:ff9b::192.0.2.33',
  ])('finds IPv6 %s', (ip) => {
    expect(found(`host ${ip} is up`)).toEqual([ip])
  })

  it.each([
    ['12:30:45', 'a time'],
    ['00:1a:2b:3c:4d:5e', 'a MAC address'],
    ['1::2::3', 'two "::"'],
    ['1:2:3:4:5:6:7:8:9', 'nine groups'],
    ['12345::1', 'a five-digit group'],
    ['::1', 'loopback only'],
    ['std::vector', 'C++'],
    ['add::beef', 'no digit'],
  ])('rejects %s (%s)', (text) => {
    expect(found(`see ${text} here`)).toEqual([])
    expect(isIpv6(text)).toBe(false)
  })
})
