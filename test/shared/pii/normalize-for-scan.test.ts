import { describe, expect, it } from 'vitest'
import { normalizeForScan } from '../../../shared/pii/normalize-for-scan.ts'

describe('normalizeForScan', () => {
  it('returns plain ASCII as it is, the same string', () => {
    const text = 'Call 555-0199 or mail ops@example.com\n\tthanks'
    expect(normalizeForScan(text)).toBe(text)
  })

  it('turns every Unicode space into a space and every dash into a hyphen', () => {
    expect(normalizeForScan('4111\u00a01111\u202f1111\u20071111')).toBe('4111 1111 1111 1111')
    expect(normalizeForScan('219\u201309\u20149999')).toBe('219-09-9999')
    expect(normalizeForScan('219\u221209\u20109999')).toBe('219-09-9999')
    expect(normalizeForScan('a\u2028b\u3000c')).toBe('a b c')
  })

  it('folds compatibility forms (NFKC): full-width digits and letters', () => {
    expect(normalizeForScan('４１１１－１１１１')).toBe('4111-1111')
    expect(normalizeForScan('ｊｏｈｎ＠ｅｘａｍｐｌｅ．ｃｏｍ')).toBe('john@example.com')
  })

  it('removes format characters, combining marks and controls, keeping tabs and line breaks', () => {
    expect(normalizeForScan('jo\u200bhn@exa\u200dmple\u00ad.com')).toBe('john@example.com')
    expect(normalizeForScan('41\u206011\u0301 1111\ufeff')).toBe('4111 1111')
    expect(normalizeForScan('a\u0000b\u0085c\td\ne')).toBe('abc\td\ne')
  })

  it('keeps ordinary non-Latin text readable', () => {
    expect(normalizeForScan('Grüße aus Köln')).toBe('Grüße aus Köln')
    expect(normalizeForScan('東京都の電話')).toBe('東京都の電話')
  })
})
