import { describe, expect, it } from 'vitest'
import { detectSsns, isValidSsn } from '../../../shared/pii/detect-ssn.ts'

const found = (text: string) => detectSsns(text).map((s) => text.slice(s.start, s.end))

describe('detectSsns', () => {
  it.each(['536-22-1234', '536 22 1234', '536.22.1234', '001-01-0001', '899-99-9999'])(
    'finds %s',
    (ssn) => {
      expect(found(`SSN ${ssn}.`)).toEqual([ssn])
    },
  )

  it.each([
    ['000-12-3456', 'area 000'],
    ['666-12-3456', 'area 666'],
    ['900-12-3456', 'area 900-999 (ITIN)'],
    ['987-65-4321', 'advertising range'],
    ['123-00-4567', 'group 00'],
    ['123-45-0000', 'serial 0000'],
    ['111-11-1111', 'one digit repeated'],
    ['123-45-6789', 'the well-known example'],
    ['078-05-1120', 'the Woolworth wallet number'],
    ['536-22.1234', 'mixed separators'],
    ['536221234', 'no separators'],
    ['1536-22-1234', 'inside a longer number'],
  ])('rejects %s (%s)', (ssn) => {
    expect(found(`SSN ${ssn}`)).toEqual([])
  })

  it('applies the rules to the parts', () => {
    expect(isValidSsn('536', '22', '1234')).toBe(true)
    expect(isValidSsn('950', '22', '1234')).toBe(false)
  })
})
