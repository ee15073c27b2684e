import { describe, expect, it } from 'vitest'
import { converseUnhonoured, withoutFields } from '../../../shared/bedrock/converse-capabilities.ts'
import { toConverseRequest } from '../../../shared/bedrock/to-converse-request.ts'
import { BurstAction } from '../../../shared/crd/policy-action.ts'
import type { ChatCompletionRequest } from '../../../shared/openai/chat-completion-request.ts'

const request = (extra: Record<string, unknown>) =>
  ({
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    add_generation_prompt: true,
    continue_final_message: false,
    ...extra,
  }) as ChatCompletionRequest

describe('what Converse can honour', () => {
  it('lists the fields a request sets that Bedrock cannot honour', () => {
    const fields = converseUnhonoured(
      request({
        seed: 1,
        n: 2,
        logprobs: true,
        reasoning_effort: 'low',
        parallel_tool_calls: false,
        response_format: { type: 'json_schema', json_schema: { name: 'x' } },
      }),
    ).map((f) => f.field)
    expect(fields.sort()).toEqual(
      [
        'logprobs',
        'n',
        'parallel_tool_calls',
        'reasoning_effort',
        'response_format',
        'seed',
      ].sort(),
    )
    expect(
      converseUnhonoured(
        request({
          n: 1,
          logprobs: false,
          parallel_tool_calls: true,
          response_format: { type: 'text' },
        }),
      ),
    ).toEqual([])
  })

  it('refuses reasoning_effort and parallel_tool_calls false instead of dropping them', () => {
    expect(() =>
      toConverseRequest(request({ reasoning_effort: 'high' }), { modelId: 'x' }),
    ).toThrow(/reasoning_effort is not supported/)
    expect(() =>
      toConverseRequest(request({ parallel_tool_calls: false }), { modelId: 'x' }),
    ).toThrow(/parallel_tool_calls is not supported/)
  })

  it('maps a request without the fields it is told to drop', () => {
    const converse = toConverseRequest(
      request({ seed: 3, temperature: 0.5 }),
      { modelId: 'x' },
      {
        drop: ['seed'],
      },
    )
    expect(converse.inferenceConfig).toEqual({ temperature: 0.5 })
    const body = { a: 1, seed: 2 }
    expect(withoutFields(body, ['seed'])).toEqual({ a: 1 })
    expect(withoutFields(body, ['other'])).toBe(body)
  })

  it('lets a burst action name only fields Bedrock cannot honour in dropFields', () => {
    const base = { local: ['a'], external: ['b'] }
    expect(BurstAction.parse({ ...base, dropFields: ['seed', 'logprobs'] }).dropFields).toEqual([
      'seed',
      'logprobs',
    ])
    const bad = BurstAction.safeParse({ ...base, dropFields: ['temperature'] })
    expect(bad.success).toBe(false)
    expect(bad.error?.issues[0]?.path).toEqual(['dropFields', 0])
  })
})
