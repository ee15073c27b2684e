import { describe, expect, it } from 'vitest'
import {
  base64Texts,
  dataUrlOf,
  decodeBase64Text,
  escapeDecoded,
} from '../../../shared/pii/decode-hidden-text.ts'

const utf8Base64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)))

describe('escapeDecoded', () => {
  it('decodes JSON, JavaScript, percent and HTML numeric escapes', () => {
    expect(escapeDecoded('card \\u0034111 1111')).toBe('card 4111 1111')
    expect(escapeDecoded('\\u{1F600} \\x34')).toBe('\u{1F600} 4')
    expect(escapeDecoded('john%40example.com %E2%82%AC')).toBe('john@example.com €')
    expect(escapeDecoded('&#52;111&#x31;')).toBe('41111')
  })

  it('says null when there is nothing to decode', () => {
    expect(escapeDecoded('plain text, 100 % sure')).toBeNull()
    expect(escapeDecoded('a \\n newline and \\u12 short')).toBeNull()
  })
})

describe('base64Texts', () => {
  it('finds base64 of readable text, standard or URL-safe, padded or not', () => {
    const secret = 'my card is 4111 1111 1111 1111'
    expect(base64Texts(`see ${utf8Base64(secret)} above`)).toEqual([secret])
    const urlSafe = utf8Base64('ÿ?>ÿ?> mail me: john@example.com')
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
    expect(base64Texts(urlSafe.replace(/=+$/, ''))).toEqual(['ÿ?>ÿ?> mail me: john@example.com'])
  })

  it('joins base64 wrapped over lines, as MIME writes it', () => {
    const text = 'The customer, Jane Roe, SSN 219-09-9999, called about her invoice today.'
    const wrapped =
      utf8Base64(text)
        .match(/.{1,20}/g)
        ?.join('\r\n') ?? ''
    expect(base64Texts(wrapped)).toEqual([text])
  })

  it('leaves hashes, ids and words alone: they decode to binary or not at all', () => {
    const noise = [
      '3f786850e387550fdab836ed7e6dc881de23001b',
      'd41d8cd98f00b204e9800998ecf8427e',
      'internationalization',
      'AKIAIOSFODNN7EXAMPLE',
      '550e8400-e29b-41d4-a716-446655440000',
      'a'.repeat(30_000),
    ]
    for (const text of noise) expect(base64Texts(text)).toEqual([])
  })

  it('refuses runs that mix both alphabets or cannot be base64', () => {
    expect(decodeBase64Text('abc+def_ghijklmnop')).toBeNull()
    expect(decodeBase64Text('abcde')).toBeNull()
  })
})

describe('dataUrlOf', () => {
  it('decodes a text payload and says an image is not text', () => {
    expect(dataUrlOf(`data:text/plain;base64,${utf8Base64('ssn 219-09-9999')}`)).toEqual({
      mediaType: 'text/plain',
      text: 'ssn 219-09-9999',
    })
    expect(dataUrlOf('data:,card%204111')).toEqual({ mediaType: 'text/plain', text: 'card 4111' })
    expect(dataUrlOf('data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB')).toEqual({
      mediaType: 'image/png',
      text: null,
    })
    expect(dataUrlOf('https://example.com/x.png')).toBeNull()
  })
})
