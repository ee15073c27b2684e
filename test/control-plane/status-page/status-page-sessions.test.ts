import { describe, expect, it } from 'vitest'
import {
  defaultSessionTtlMs,
  statusPageSessions,
} from '../../../control-plane/status-page/status-page-sessions.ts'

const token = 'sessions-test-token-0123456789'
const ttlMs = 60_000

/** Sessions on a clock the test moves. */
function sessionsAt(startMs: number, adminToken = token) {
  const clock = { nowMs: startMs }
  const sessions = statusPageSessions(adminToken, { nowMs: () => clock.nowMs, ttlMs })
  return { clock, sessions }
}

describe('statusPageSessions', () => {
  it('issues a session valid until its expiry and expired from then on', () => {
    const { clock, sessions } = sessionsAt(1_700_000_000_000)
    const issued = sessions.issue()
    expect(issued.expiresAtMs).toBe(1_700_000_000_000 + ttlMs)
    expect(issued.maxAgeSeconds).toBe(60)
    expect(sessions.check(issued.value)).toEqual({ kind: 'valid', expiresAtMs: issued.expiresAtMs })
    clock.nowMs = issued.expiresAtMs - 1
    expect(sessions.check(issued.value).kind).toBe('valid')
    clock.nowMs = issued.expiresAtMs
    expect(sessions.check(issued.value).kind).toBe('expired')
  })

  it('lasts 12 hours unless told otherwise', () => {
    const sessions = statusPageSessions(token, { nowMs: () => 0 })
    expect(defaultSessionTtlMs).toBe(12 * 3600 * 1000)
    expect(sessions.issue()).toMatchObject({
      expiresAtMs: defaultSessionTtlMs,
      maxAgeSeconds: 43_200,
    })
  })

  it('holds nothing of the token, and two sessions differ', () => {
    const { sessions } = sessionsAt(1)
    const a = sessions.issue().value
    const b = sessions.issue().value
    expect(a).not.toBe(b)
    for (const value of [a, b]) {
      expect(value).not.toContain(token)
      expect(value).not.toContain(Buffer.from(token).toString('base64url').slice(0, 16))
      expect(value).toMatch(/^[A-Za-z0-9._-]+$/)
    }
  })

  it('is valid on every replica sharing the admin token, and on none once it changes', () => {
    const issued = sessionsAt(1_000).sessions.issue().value
    expect(sessionsAt(2_000).sessions.check(issued).kind).toBe('valid')
    expect(sessionsAt(2_000, `${token}-rotated`).sessions.check(issued).kind).toBe('invalid')
  })

  it('refuses a forged session: another expiry, id or signature', () => {
    const { sessions } = sessionsAt(1_000)
    const value = sessions.issue().value
    const [version, expiry, id, mac] = value.split('.') as [string, string, string, string]
    const later = (Number.parseInt(expiry, 36) + 3_600_000).toString(36)
    const flip = (text: string) => (text[0] === 'A' ? 'B' : 'A') + text.slice(1)
    for (const forged of [
      [version, later, id, mac],
      [version, expiry, flip(id), mac],
      [version, expiry, id, flip(mac)],
      ['v2', expiry, id, mac],
    ])
      expect(sessions.check(forged.join('.')), forged.join('.')).toEqual({ kind: 'invalid' })
  })

  it('refuses another spelling of its signature: the bits the last character does not carry', () => {
    const { sessions } = sessionsAt(1_000)
    const value = sessions.issue().value
    const [version, expiry, id, mac] = value.split('.') as [string, string, string, string]
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const last = alphabet.indexOf(mac.at(-1) ?? '')
    // 32 bytes are 43 characters; the last holds 4 bits of the MAC and 2 unused ones.
    const sameBytes = alphabet[(last & 0b111100) | (~last & 0b000011)] as string
    const respelled = `${mac.slice(0, -1)}${sameBytes}`
    expect(Buffer.from(respelled, 'base64url')).toEqual(Buffer.from(mac, 'base64url'))
    expect(sessions.check([version, expiry, id, respelled].join('.'))).toEqual({ kind: 'invalid' })
    expect(sessions.check(value)).toEqual({ kind: 'valid', expiresAtMs: 1_000 + ttlMs })
  })

  it('refuses malformed values, never throwing', () => {
    const { sessions } = sessionsAt(1_000)
    const good = sessions.issue().value
    for (const value of [
      null,
      '',
      token,
      'v1',
      'v1...',
      `${good}.`,
      ` ${good}`,
      good.slice(0, -1),
      good.replace(/\.[^.]+$/, '.%%%%'),
      'v1.zzzzzzzzzzzzz.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      'x'.repeat(10_000),
    ])
      expect(sessions.check(value), String(value)).toEqual({ kind: 'invalid' })
  })

  it('takes its ids from the randomness it is given', () => {
    const fixed = statusPageSessions(token, { nowMs: () => 0, random: (n) => new Uint8Array(n) })
    expect(fixed.issue().value).toBe(fixed.issue().value)
    expect(fixed.issue().value.split('.')[2]).toBe('AAAAAAAAAAAAAAAAAAAAAA')
  })
})
