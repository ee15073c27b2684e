import { describe, expect, it } from 'vitest'
import { detectIbans, followsIbanHead, ibanChecksumValid } from '../../../shared/pii/detect-iban.ts'

const found = (text: string) => detectIbans(text).map((s) => text.slice(s.start, s.end))

// Example IBANs published by the national banks and the SWIFT registry.
const valid = [
  'DE89370400440532013000',
  'GB82WEST12345698765432',
  'FR1420041010050500013M02606',
  'NL91ABNA0417164300',
  'CH9300762011623852957',
  'ES9121000418450200051332',
  'IT60X0542811101000000123456',
  'BE68539007547034',
  'NO9386011117947',
]

describe('detectIbans', () => {
  it.each(valid)('finds %s, compact and printed in groups of four', (iban) => {
    expect(found(`IBAN ${iban}.`)).toEqual([iban])
    const printed = iban.replace(/(.{4})(?=.)/g, '$1 ')
    expect(found(`IBAN: ${printed} please`)).toEqual([printed])
  })

  it('accepts lower case but not mixed case', () => {
    expect(found('iban gb82west12345698765432')).toEqual(['gb82west12345698765432'])
    expect(found('iban GB82west12345698765432')).toEqual([])
  })

  it('rejects a wrong checksum, a wrong length and an unknown country', () => {
    expect(ibanChecksumValid('GB82WEST12345698765433')).toBe(false)
    expect(found('GB82WEST12345698765433')).toEqual([])
    expect(found('DE8937040044053201300')).toEqual([])
    expect(found('DE893704004405320130001')).toEqual([])
    expect(found('ZZ89370400440532013000')).toEqual([])
  })

  it('sees an IBAN-shaped head before digits, of a registered country only', () => {
    const at = (text: string) => followsIbanHead(text, text.length)
    expect(at('NL02 BARC ')).toBe(true)
    expect(at('IBAN: AT02 ')).toBe(true)
    expect(at('DE00-3704-')).toBe(true)
    expect(at('ZZ02 BARC ')).toBe(false)
    expect(at('room AB12 ')).toBe(false)
    expect(at('XNL02 BARC ')).toBe(false)
    expect(at('NL02 BARC')).toBe(false)
  })

  it('stops at the country length even when words follow', () => {
    expect(found('DE89 3704 0044 0532 0130 00 is mine')).toEqual(['DE89 3704 0044 0532 0130 00'])
  })
})
