import { describe, expect, it } from 'vitest'
import { collectScanTexts, maxScanDepth } from '../../../shared/pii/collect-scan-texts.ts'
import { scanRequestPii } from '../../../shared/pii/scan-request-pii.ts'

const budget = 1_000_000
const texts = (value: unknown) => collectScanTexts([value], { budget })
const labels = (...values: unknown[]) => scanRequestPii(values, { budget }).labels

describe('collectScanTexts', () => {
  it('reads every string, number and unusual key, not names of roles and types', () => {
    const found = texts({
      model: 'qwen3',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
      metadata: { 'john@example.com': 4111111111111111 },
    }).texts
    expect(found).toEqual(expect.arrayContaining(['hello', 'john@example.com', '4111111111111111']))
    expect(found).not.toContain('user')
    expect(found).not.toContain('qwen3')
    expect(found).not.toContain('metadata')
  })

  it('reads JSON inside strings decoded, as a provider gets tool-call arguments', () => {
    const found = texts({
      arguments: '{"card":"\\u0034111111111111111","nested":"[\\"x\\"]"}',
    }).texts
    expect(found).toEqual(expect.arrayContaining(['4111111111111111', 'x']))
  })

  it('reads neighbouring text pieces joined, with and without a space', () => {
    const found = texts([{ text: '4111 1111' }, { text: ' 1111 1111' }, 'x']).texts
    expect(found).toEqual(
      expect.arrayContaining(['4111 1111 1111 1111x', '4111 1111  1111 1111 x']),
    )
  })

  it('says what it cannot read: media parts, binary data URLs, too deep, too much', () => {
    expect(texts([{ type: 'image_url', image_url: { url: 'https://x/y.png' } }]).unreadable).toBe(
      'a content part of type image_url',
    )
    expect(texts([{ image: { format: 'png', source: { bytes: 'AAAA' } } }]).unreadable).toBe(
      'an image block',
    )
    expect(texts({ note: 'data:application/pdf;base64,JVBERi0xLjcKJcfs' }).unreadable).toBe(
      'a application/pdf data: URL',
    )
    let deep: unknown = 'bottom'
    for (let i = 0; i < maxScanDepth + 5; i++) deep = { a: deep }
    expect(texts(deep).unreadable).toBe('content nested too deeply to scan')
    expect(collectScanTexts(['x'.repeat(100)], { budget: 50 }).unreadable).toBe(
      'more text than the scan reads',
    )
    expect(texts({ messages: [{ role: 'user', content: 'all readable' }] }).unreadable).toBeNull()
  })

  it('never overflows the stack, however deep a string hides JSON', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`
    expect(() => texts({ arguments: deep })).not.toThrow()
  })
})

describe('scanRequestPii', () => {
  it('labels what hides in any field, through the disguises a model reads through', () => {
    expect(labels({ stop: ['ssn 219\u201309\u20139999'] })).toContain('pii:ssn')
    expect(labels({ tools: [{ function: { description: 'jo\u200bhn@example.com' } }] })).toContain(
      'pii:email',
    )
    expect(labels({ id: btoa('card: 4111.1111.1111.1111') })).toContain('pii:card')
    expect(labels({ content: 'card ４１１１ １１１１ １１１１ １１１１' })).toContain('pii:card')
  })

  it('labels nothing in the look-alikes of code and logs', () => {
    expect(
      labels({
        messages: [
          {
            role: 'user',
            content:
              'upgrade to 15.12.241, commit 3f786850e387550fdab836ed7e6dc881de23001b, id 550e8400-e29b-41d4-a716-446655440000, at 2024-05-12T10:00:00Z, version 120.0.6099.109',
          },
        ],
      }),
    ).toEqual([])
  })
})
