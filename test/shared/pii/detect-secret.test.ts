import { describe, expect, it } from 'vitest'
import { detectSecrets, isJwt } from '../../../shared/pii/detect-secret.ts'

const found = (text: string) => detectSecrets(text).map((s) => text.slice(s.start, s.end))

const jwt = [
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9', // {"alg":"HS256","typ":"JWT"}
  'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ',
  'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
].join('.')

describe('detectSecrets', () => {
  it('finds AWS access key ids', () => {
    expect(found('aws_access_key_id = AKIAIOSFODNN7EXAMPLE')).toEqual(['AKIAIOSFODNN7EXAMPLE'])
    expect(found('ASIAY34FZKBOKMUTVV7A is temporary')).toEqual(['ASIAY34FZKBOKMUTVV7A'])
  })

  it('rejects AWS-like ids of the wrong length or alphabet', () => {
    expect(found('AKIAIOSFODNN7EXAMPL')).toEqual([])
    expect(found('AKIAIOSFODNN7EXAMPLE1')).toEqual([])
    expect(found('AKIAIOSFODNN1EXAMPLE')).toEqual([]) // 1 is not base32
    expect(found('XAKIAIOSFODNN7EXAMPLE')).toEqual([])
  })

  it('finds a PEM private key block, whole', () => {
    const pem =
      '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3\n-----END RSA PRIVATE KEY-----'
    expect(found(`key:\n${pem}\nthanks`)).toEqual([pem])
    const openssh =
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----'
    expect(found(openssh)).toEqual([openssh])
  })

  it('claims an unterminated private key by its header, and ignores public keys', () => {
    expect(found('-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAAS')).toEqual([
      '-----BEGIN PRIVATE KEY-----',
    ])
    expect(found('-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----')).toEqual([])
  })

  it('finds JWTs whose header is JSON naming an alg', () => {
    expect(isJwt(jwt)).toBe(true)
    expect(found(`token=${jwt}&x=1`)).toEqual([jwt])
    // {"typ":"JWT"}: JSON, but no alg.
    expect(found('eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiIxIn0.abc')).toEqual([])
    expect(found('eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9x.a.b')).toEqual([])
    expect(found('eyJust.some.dotted.text')).toEqual([])
    expect(found('www.example.com.au')).toEqual([])
  })

  it('finds bearer tokens that look random', () => {
    expect(found('Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0')).toEqual([
      '9f8e7d6c5b4a39281706f5e4d3c2b1a0',
    ])
    expect(found('bearer tokens are described in RFC 6750')).toEqual([])
    expect(found('Bearer authenticationisneeded')).toEqual([])
  })

  it('finds GitHub, Slack, Stripe and kinference keys', () => {
    const tokens = [
      `ghp_${'a1B2'.repeat(9)}`,
      `github_pat_${'a1_B'.repeat(20)}ab`,
      'xoxb-123456789012-abcdefABCDEF',
      `sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`,
      `AIza${'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'}`,
      'kinf_demo01_Q2xhdWRlIGlzIGEgZ29vZCBtb2RlbA',
    ]
    for (const token of tokens) expect(found(`use ${token} now`)).toEqual([token])
    expect(found(`ghp_${'a'.repeat(35)}`)).toEqual([])
  })
})
