import { describe, expect, it } from 'vitest'
import { detectCards, isCardNumber, luhnValid } from '../../../shared/pii/detect-card.ts'

const found = (text: string) => detectCards(text).map((s) => text.slice(s.start, s.end))

describe('detectCards', () => {
  it.each([
    '4111111111111111', // Visa
    '4111 1111 1111 1111',
    '4111-1111-1111-1111',
    '5555555555554444', // Mastercard
    '2223003122003222', // Mastercard 2-series
    '3782 822463 10005', // Amex, 4-6-5
    '6011111111111117', // Discover
    '3530111333300000', // JCB
    '30569309025904', // Diners, 14 digits
    '6759649826438453', // Maestro
  ])('finds %s with its exact span', (card) => {
    expect(found(`paid with ${card}, thanks`)).toEqual([card])
  })

  it('needs the Luhn checksum', () => {
    expect(luhnValid('4111111111111111')).toBe(true)
    expect(luhnValid('4111111111111112')).toBe(false)
    expect(found('card 4111111111111112')).toEqual([])
    expect(found('card 4111 1111 1111 1121')).toEqual([])
  })

  it('needs an issuer range of that length unless the text calls it a card', () => {
    // 7 and 9 start no card scheme; both numbers pass Luhn.
    expect(luhnValid('7000000000000005')).toBe(true)
    expect(isCardNumber('7000000000000005')).toBe(false)
    expect(found('order 7000000000000005 shipped')).toEqual([])
    expect(found('my credit card 7000000000000005 was declined')).toEqual(['7000000000000005'])
    // Amex is 15 digits: a Luhn-valid 16-digit 37... number is not one.
    expect(luhnValid('3700000000000007')).toBe(true)
    expect(isCardNumber('3700000000000007')).toBe(false)
  })

  it('ignores digits glued to words, longer runs and odd groupings', () => {
    expect(found('id=x4111111111111111')).toEqual([])
    expect(found('41111111111111110000000')).toEqual([])
    expect(found('v4111111111111111')).toEqual([])
    expect(found('41 11 11 11 11 11 11 11')).toEqual([])
    expect(found('4111 1111-1111 1111')).toEqual([])
    expect(found('3.4111111111111111')).toEqual([])
  })

  it('does not claim the digits of an IBAN whose check digits fail', () => {
    // 5985 9189 0494 0740 passes Luhn and lies in Maestro's range: only the head says IBAN.
    expect(found('5985 9189 0494 0740')).toEqual(['5985 9189 0494 0740'])
    expect(found('IBAN: AT02 5985 9189 0494 0740')).toEqual([])
  })

  it('finds a card next to other numbers', () => {
    expect(found('4111 1111 1111 1111 exp 12/29 cvv 123')).toEqual(['4111 1111 1111 1111'])
  })
})
