import { describe, expect, it } from 'vitest'
import { detectEmails } from '../../../shared/pii/detect-email.ts'

const found = (text: string) => detectEmails(text).map((s) => text.slice(s.start, s.end))

describe('detectEmails', () => {
  it.each([
    'jane.doe@example.com',
    'j+tag@mail.example.co.uk',
    "o'brien@example.ie",
    'x_y-z@sub-domain.example.museum',
    'user@xn--bcher-kva.xn--tckwe',
  ])('finds %s with its exact span', (email) => {
    expect(found(`write to <${email}>.`)).toEqual([email])
    expect(found(`mail ${email}. Thanks`)).toEqual([email])
  })

  it.each([
    ['@decorator.name', 'no local part'],
    ['.jane@example.com', 'leading dot is dropped', 'jane@example.com'],
    ['jane..doe@example.com', 'two dots'],
    ['jane@localhost', 'one label'],
    ['lodash@4.17.21', 'numeric TLD'],
    ['jane@example.c', 'one-letter TLD'],
    ['jane@-example.com', 'label starting with a dash'],
    ['jane@exa_mple.com', 'underscore in the domain'],
  ])('handles %s (%s)', (text, _why, expected?: string) => {
    expect(found(`see ${text} here`)).toEqual(expected === undefined ? [] : [expected])
  })

  it('finds several addresses', () => {
    expect(found('a@b.io, c@d.org;e@f.de')).toEqual(['a@b.io', 'c@d.org', 'e@f.de'])
  })

  it('refuses a local part longer than 64 characters', () => {
    expect(found(`${'a'.repeat(65)}@example.com`)).toEqual([])
    expect(found(`${'a'.repeat(64)}@example.com`)).toHaveLength(1)
  })
})
