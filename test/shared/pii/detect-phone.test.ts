import { describe, expect, it } from 'vitest'
import { detectPhones } from '../../../shared/pii/detect-phone.ts'

const found = (text: string) => detectPhones(text).map((s) => text.slice(s.start, s.end))

describe('detectPhones', () => {
  it.each([
    ['+1 415-555-2671', 'US, international'],
    ['+1 (415) 555-2671', 'US, area code in parentheses'],
    ['(415) 555-2671', 'US, national'],
    ['415-555-2671', 'US, dashes'],
    ['415.555.2671', 'US, dots'],
    ['1-800-555-0199', 'US, trunk 1'],
    ['+44 20 7946 0958', 'UK, international'],
    ['020 7946 0958', 'UK, national'],
    ['07700 900123', 'UK mobile, trunk 0'],
    ['+49 30 901820', 'DE, international'],
    ['030 901820 12', 'DE, national'],
    ['030/9018201', 'DE, slash'],
    ['+33 1 42 68 53 00', 'FR, international'],
    ['01 42 68 53 00', 'FR, national'],
    ['01.42.68.53.00', 'FR, dots'],
    ['+91 98765 43210', 'IN, international'],
    ['098765 43210', 'IN, national'],
    ['+55 11 91234-5678', 'BR, international'],
    ['(11) 91234-5678', 'BR, national'],
    ['+46 (0)8 928 571 38', 'SE, trunk in parentheses'],
    ['0044 20 7946 0958', 'UK, 00 prefix'],
  ])('finds %s (%s)', (phone) => {
    expect(found(`Reach me on ${phone} today`)).toEqual([phone])
  })

  it('includes an extension in the span', () => {
    expect(found('Desk: 415-555-2671x204')).toEqual(['415-555-2671x204'])
    expect(found('call 415-555-2671 ext. 204 please')).toEqual(['415-555-2671 ext. 204'])
  })

  it('claims two-group and ungrouped numbers only next to a phone word', () => {
    expect(found('Phone: 555 0123')).toEqual(['555 0123'])
    expect(found('Fax: 4155552671')).toEqual(['4155552671'])
    expect(found('4155552671 (mobile)')).toEqual(['4155552671'])
    expect(found('She lives at 1742 3911 Fourth Avenue')).toEqual([])
    expect(found('order 4155552671 has shipped')).toEqual([])
  })

  it('takes contact verbs and "registered" (number) as phone words', () => {
    expect(found("They're not answering at 99 668472")).toEqual(['99 668472'])
    expect(found('no message on my registered 668 5702. Could you')).toEqual(['668 5702'])
    expect(found('Ring me at 020 7946')).toEqual(['020 7946'])
    expect(found('answering 12 questions in 3 hours')).toEqual([])
  })

  it.each([
    ['2024-05-12', 'ISO date'],
    ['12.05.2024', 'European date'],
    ['05/12/2024', 'US date'],
    ['1990-2000', 'year range'],
    ['192.168.100.200', 'IPv4 address'],
    ['536-22-1234', 'SSN shape'],
    ['$1 234 567', 'amount'],
    ['1 234 567.50', 'amount with decimals'],
    ['12 500 000', 'round amount'],
    ['1,234,567', 'thousands'],
    ['978-3-16-148410-0', 'ISBN'],
    ['10.0.19041.1234', 'version'],
    ['4111 1111 1111 1111', 'card digits'],
    ['+0 123 456 789', 'country code 0'],
    ['+1 23', 'too short'],
    ['12:20:39', 'time'],
    ['ABC-415-555-2671', 'glued to a word'],
  ])('does not claim %s (%s)', (text) => {
    expect(found(`value ${text} here`)).toEqual([])
  })

  // Issue 15: dotted versions and IBANs with bad check digits were labelled phone numbers.
  it.each([
    'upgrade to 15.12.241 now',
    'release 19.21.190',
    'pip install torch==12.95.2335',
    'npm i react@19.60.1715',
    '"version": "23.81.508",',
    'kernel 17.39.127-generic',
    'tag 19.60.1715-rc.3',
  ])('does not claim the version in %s', (text) => {
    expect(found(text)).toEqual([])
  })

  it('claims a dotted number dialled with a trunk 0, NANP-shaped or next to a phone word', () => {
    expect(found('Reach me on 01.42.68.53.00')).toEqual(['01.42.68.53.00'])
    expect(found('Reach me on 0612.345.678')).toEqual(['0612.345.678'])
    expect(found('Reach me on 415.555.2671')).toEqual(['415.555.2671'])
    expect(found('tel. 612.34.56.78')).toEqual(['612.34.56.78'])
    expect(found('Reach me on 612.34.56.78')).toEqual([])
  })

  it.each([
    'to NL02 BARC 1626 2299 87 please',
    'IBAN: NL03 ABNA 0488 5194 90',
    'to NL02 ABNA 0074 4334 88 please',
    'BE68 5390 0754 7035',
  ])('does not claim the digits of the IBAN-shaped %s', (text) => {
    expect(found(text)).toEqual([])
  })

  it('does not claim a national number named as another kind of number', () => {
    expect(found('order #357-2778-351')).toEqual([])
    expect(found('order #005-1680-632')).toEqual([])
    expect(found('ticket 415-555-267')).toEqual([])
    expect(found('Invoice no. 415-555-2671')).toEqual([])
    // Only right before it: the phone number later in the sentence is still one.
    expect(found('about order 12, call 415-555-2671')).toEqual(['415-555-2671'])
    expect(found('caller id 415-555-2671')).toEqual(['415-555-2671'])
    expect(found('order ref, then +44 20 7946 0958')).toEqual(['+44 20 7946 0958'])
  })

  it('claims 4-2-4 groups only with a trunk 0 or a phone word', () => {
    expect(found("my driver's license number is 2270-66-1551")).toEqual([])
    expect(found('Tel: 2270-66-1551')).toEqual(['2270-66-1551'])
    expect(found('free dial 0120-12-3456')).toEqual(['0120-12-3456'])
  })
})
