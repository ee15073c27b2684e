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
})
