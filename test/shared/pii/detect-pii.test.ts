import { describe, expect, it } from 'vitest'
import { compileCustomPatterns } from '../../../shared/pii/custom-pii-patterns.ts'
import { detectPii } from '../../../shared/pii/detect-pii.ts'

describe('detectPii', () => {
  it('labels each type found, sorted and unique, with spans in text order', () => {
    const text =
      'Mail jane@example.com or jo@example.org, card 4111 1111 1111 1111, ' +
      'IBAN DE89370400440532013000, SSN 536-22-1234, from 10.0.0.7, call +44 20 7946 0958, ' +
      'key AKIAIOSFODNN7EXAMPLE'
    const detection = detectPii(text)
    expect(detection.labels).toEqual([
      'pii',
      'pii:card',
      'pii:email',
      'pii:iban',
      'pii:ip',
      'pii:phone',
      'pii:secret',
      'pii:ssn',
    ])
    expect(detection.spans.map((s) => [s.type, text.slice(s.start, s.end)])).toEqual([
      ['email', 'jane@example.com'],
      ['email', 'jo@example.org'],
      ['card', '4111 1111 1111 1111'],
      ['iban', 'DE89370400440532013000'],
      ['ssn', '536-22-1234'],
      ['ip', '10.0.0.7'],
      ['phone', '+44 20 7946 0958'],
      ['secret', 'AKIAIOSFODNN7EXAMPLE'],
    ])
  })

  it('gives no labels to text without PII', () => {
    expect(
      detectPii('Summarise the 2024-05-12 meeting: revenue grew 12% to $1,234,567 in Q2.'),
    ).toEqual({ labels: [], spans: [] })
    expect(detectPii('')).toEqual({ labels: [], spans: [] })
  })

  it('lets the more specific detector win where two claim the same digits', () => {
    // 13-digit Visa: also a plausible phone number shape.
    const detection = detectPii('card 4222 2222 2222 2')
    expect(detection.labels).toEqual(['pii', 'pii:card'])
    // The digits of an IBAN are not a card or a phone number.
    expect(detectPii('GB82 WEST 1234 5698 7654 32').labels).toEqual(['pii', 'pii:iban'])
    // An IPv4-mapped IPv6 address is one span.
    expect(detectPii('::ffff:192.0.2.128').spans).toHaveLength(1)
  })

  it('adds custom labels, and pii too when the label is in the pii group', () => {
    const custom = compileCustomPatterns([
      { name: 'patient', regex: '\\bPRN-\\d{7}\\b', label: 'pii:patient-record' },
      { name: 'project', regex: 'Project Bluebird', label: 'confidential' },
    ])
    expect(detectPii('record PRN-1234567', { custom }).labels).toEqual([
      'pii',
      'pii:patient-record',
    ])
    expect(detectPii('about Project Bluebird', { custom })).toEqual({
      labels: ['confidential'],
      spans: [{ type: 'confidential', start: 6, end: 22 }],
    })
    expect(detectPii('PRN-1234567, Project Bluebird, a@b.io', { custom }).labels).toEqual([
      'confidential',
      'pii',
      'pii:email',
      'pii:patient-record',
    ])
  })

  describe('on hostile input, returns (the test timeout is the bound)', () => {
    it.each([
      ['1 MB of digits', '7'.repeat(1 << 20)],
      ['digits and spaces', '12 '.repeat(300_000)],
      ['100k dots', '.'.repeat(100_000)],
      ['colons', ':'.repeat(200_000)],
      ['hex and colons', 'ab:'.repeat(200_000)],
      ['a word without end', 'a'.repeat(1 << 20)],
      ['at signs', '@'.repeat(200_000)],
      ['local parts and at signs', 'a@'.repeat(200_000)],
      ['eyJ forever', 'eyJ'.repeat(300_000)],
      ['eyJ and dots', 'eyJabcdefgh.'.repeat(80_000)],
      ['unterminated PEM blocks', '-----BEGIN PRIVATE KEY-----\nAAAA\n'.repeat(20_000)],
      ['Bearer Bearer', 'Bearer '.repeat(150_000)],
      ['AKIA', 'AKIA'.repeat(250_000)],
      ['IBAN starts', 'GB82 '.repeat(200_000)],
      ['plus and parentheses', '+('.repeat(200_000)],
      ['phone-ish', '(1)-'.repeat(200_000)],
      ['IBAN heads before digits', 'NL02 ABCD 1234 '.repeat(70_000)],
      ['IBAN groups without end', 'NL02 ABCD-'.repeat(100_000)],
      ['versions', '15.12.241.'.repeat(100_000)],
      ['order words', 'order no. # '.repeat(80_000)],
      ['order words and numbers', 'order #357-2778-351 '.repeat(50_000)],
    ])('%s', (_name, text) => {
      const detection = detectPii(text)
      expect(Array.isArray(detection.labels)).toBe(true)
    })

    it('many matches stay linear', () => {
      const text = '10.0.0.1 '.repeat(100_000)
      const detection = detectPii(text)
      expect(detection.labels).toEqual(['pii', 'pii:ip'])
      expect(detection.spans).toHaveLength(100_000)
    })

    // Each detector reads a bounded window around a candidate (the IBAN head 40 characters,
    // the words before a phone 32), so time grows with the text, not with its square: 1 MB
    // of candidates finishes within the test's timeout (quadratic work would not), and the
    // look-behinds still decide (no span: every phone follows a failed IBAN head).
    it('the look-behinds of issue 15 stay bounded on 1 MB', () => {
      const large = 'NL02 ABCD 415-555-2671 '.repeat(45_000)
      expect(detectPii(large).spans).toHaveLength(0)
    })

    it('nothing is found in pure digits, dots or letters', () => {
      expect(detectPii('7'.repeat(1 << 20)).labels).toEqual([])
      expect(detectPii('.'.repeat(100_000)).labels).toEqual([])
      expect(detectPii('a'.repeat(1 << 20)).labels).toEqual([])
    })
  })
})
