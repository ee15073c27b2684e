import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { errorOf, post, start } from '../../../support/embedded-stack.ts'

/**
 * Requests a careless or hostile client sends, through the whole stack (edge, scorer,
 * simulated vLLM pods): each gets an OpenAI-shaped answer of the right class, and none
 * reaches a pod in a form the pod chokes on.
 */
let stack: EmbeddedStack
beforeAll(async () => {
  stack = await start()
})
afterAll(() => stack?.close())

const chat = (extra: object = {}) => ({
  model: 'qwen3.8-27b-fp8',
  messages: [{ role: 'user', content: 'Say hello.' }],
  max_tokens: 8,
  ...extra,
})

describe('the prompt-length rule', () => {
  it('counts a long tool description, decided by the scorer with its own count', async () => {
    const description = 'Looks the weather up for a city and a date, in Celsius. '.repeat(1_400)
    const tools = [{ type: 'function', function: { name: 'weather', description } }]
    const response = await post(stack, chat({ tools }))
    expect(response.status).toBe(413)
    expect((await errorOf(response)).code).toBe('prompt_too_long')
    expect(
      (await post(stack, chat({ tools: [{ ...tools[0], function: { name: 'weather' } }] }))).status,
    ).toBe(200)
  })
})

describe("vLLM's refusals", () => {
  const cases: [string, object, string | null][] = [
    ['a negative temperature', { temperature: -1 }, 'temperature'],
    ['top_p above 1', { top_p: 1.5 }, 'top_p'],
    [
      'stream_options without stream',
      { stream_options: { include_usage: true } },
      'stream_options',
    ],
    ['min_tokens above max_tokens', { min_tokens: 20, max_tokens: 8 }, null],
    ['n > 1 at temperature 0', { n: 2, temperature: 0 }, null],
  ]
  for (const [what, fields, param] of cases)
    it(`reach the client in OpenAI's shape: ${what}`, async () => {
      const response = await post(stack, chat(fields))
      expect(response.status).toBe(400)
      const body = (await response.json()) as Record<string, unknown>
      expect(Object.keys(body)).toEqual(['error'])
      const error = body.error as { type: string; code: unknown; message: string; param: unknown }
      expect(error.type).toBe('invalid_request_error')
      expect(typeof error.code).toBe('string')
      expect(error.message).not.toMatch(/BadRequestError|Traceback/)
      if (param !== null) expect(String(error.param)).toContain(param)
    })
})

describe('a hostile x-request-id', () => {
  it('is not passed to the pods: a 30 KiB one still gets its answer, with the edge’s id', async () => {
    const response = await post(stack, chat(), { 'x-request-id': 'r'.repeat(30 * 1024) })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })
})
