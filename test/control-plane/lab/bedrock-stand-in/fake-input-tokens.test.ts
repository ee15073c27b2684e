import { describe, expect, it } from 'vitest'
import {
  fakeInputTokens,
  fakeTokens,
} from '../../../../control-plane/lab/bedrock-stand-in/fake-input-tokens.ts'

describe('fakeInputTokens: the one rule behind usage and CountTokens', () => {
  it('counts one token per whitespace-separated word', () => {
    expect(fakeTokens('  one two\n\tthree  ')).toBe(3)
    expect(fakeTokens('')).toBe(0)
  })

  it('counts every text a request carries: system, messages, tool calls, results, definitions', () => {
    const counted = fakeInputTokens({
      system: [{ text: 'You are terse' }],
      messages: [
        { role: 'user', content: [{ text: 'What is the weather' }] },
        {
          role: 'assistant',
          content: [
            { toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              toolResult: {
                toolUseId: 't1',
                content: [{ text: 'Sunny and warm' }, { json: { temp: 21 } }],
              },
            },
            { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } },
          ],
        },
      ],
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'get_weather',
              description: 'Get the weather',
              inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } },
            },
          },
        ],
      },
    })
    // JSON counts as laid out one member per line: {"city": "Paris"} is `{ "city": "Paris" }`.
    const system = 3
    const user = 4
    const toolUse = 1 + 4
    const toolResult = 3 + 4
    // { "type": "object", "properties": { "city": { "type": "string" } } }
    const definition = 1 + 3 + 12
    expect(counted).toEqual({
      total: system + user + toolUse + toolResult + definition,
      cacheable: 0,
      cacheablePrefix: '',
    })
  })

  it('makes the system text before the last cache point cacheable, keyed by that text', () => {
    expect(
      fakeInputTokens({
        system: [
          { text: 'shared rules here' },
          { cachePoint: { type: 'default' } },
          { text: 'more shared' },
          { cachePoint: { type: 'default' } },
          { text: 'per request' },
        ],
        messages: [
          { role: 'user', content: [{ text: 'hi' }, { cachePoint: { type: 'default' } }] },
        ],
      }),
    ).toEqual({ total: 8, cacheable: 5, cacheablePrefix: 'shared rules here\nmore shared\n' })
  })
})
