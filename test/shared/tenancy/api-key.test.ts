import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { mintApiKey, parseApiKey, sha256HexOf } from '../../../shared/tenancy/api-key.ts'

const secret = 'Ab3dEfGh1jKlMn0pQrStUv'

describe('parseApiKey', () => {
  it('splits kinf_<id>_<secret>', () => {
    expect(parseApiKey(`kinf_acme01_${secret}`)).toEqual({ id: 'acme01', secret })
    // base64url secrets may contain _ and -: the id ends at the first _.
    expect(parseApiKey(`kinf_acme01_${secret}_-x`)).toEqual({
      id: 'acme01',
      secret: `${secret}_-x`,
    })
  })

  it.each([
    ['', 'empty'],
    [`sk_acme01_${secret}`, 'wrong prefix'],
    [`kinf_ac_${secret}`, 'id too short'],
    [`kinf_${'a'.repeat(33)}_${secret}`, 'id too long'],
    [`kinf_Acme01_${secret}`, 'upper-case id'],
    ['kinf_acme01_short', 'secret under 128 bits'],
    [`kinf_acme01_${secret}!`, 'secret outside base62/base64url'],
    [`kinf_acme01${secret}`, 'no separator'],
    [`Bearer kinf_acme01_${secret}`, 'a whole header'],
  ])('refuses %j (%s)', (raw) => {
    expect(parseApiKey(raw)).toBeNull()
  })
})

describe('sha256HexOf', () => {
  it('is the hex SHA-256 of the UTF-8 text', async () => {
    expect(await sha256HexOf('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    )
  })
})

describe('mintApiKey', () => {
  it('mints parseable keys with 32 base62 characters of secret', () => {
    const minted = mintApiKey(randomBytes)
    expect(minted.key).toBe(`kinf_${minted.id}_${minted.secret}`)
    expect(parseApiKey(minted.key)).toEqual({ id: minted.id, secret: minted.secret })
    expect(minted.secret).toMatch(/^[A-Za-z0-9]{32}$/)
    expect(minted.id).toMatch(/^[a-z0-9]{12}$/)
    expect(mintApiKey(randomBytes).key).not.toBe(minted.key)
  })

  it('takes a chosen id and refuses a bad one', () => {
    expect(mintApiKey(randomBytes, { id: 'acme02' }).id).toBe('acme02')
    expect(() => mintApiKey(randomBytes, { id: 'Bad_Id' })).toThrow(/lower-case letters or digits/)
  })

  it('skips bytes that would bias the alphabet', () => {
    // Bytes 248..255 would favour the first 8 characters under % 62: they are dropped.
    const source = (n: number) =>
      Uint8Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 250 : (i - 1) / 2))
    expect(mintApiKey(source, { id: 'test' }).secret).toBe('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef')
  })

  it('has no bias over many draws', () => {
    const counts = new Map<string, number>()
    for (let i = 0; i < 2_000; i++) {
      for (const char of mintApiKey(randomBytes, { id: 'test' }).secret) {
        counts.set(char, (counts.get(char) ?? 0) + 1)
      }
    }
    expect(counts.size).toBe(62)
    // 64,000 characters over 62: about 1,032 each; a %-biased source gives ~1,290 to 8 of them.
    for (const count of counts.values()) expect(count).toBeLessThan(1_200)
  })

  it('fails clearly on a source that never yields usable bytes', () => {
    expect(() => mintApiKey((n) => new Uint8Array(n).fill(255), { id: 'test' })).toThrow(
      /random source/,
    )
  })
})
