import { describe, expect, it } from 'vitest'
import {
  canAssembleFromStream,
  maxChoices,
} from '../../../shared/openai/can-assemble-from-stream.ts'
import { parseOpenAiRequest, type RequestKind } from '../../../shared/openai/openai-request.ts'

const bodies: Record<RequestKind, object> = {
  chat: { messages: [{ role: 'user', content: 'Hi' }] },
  completion: { prompt: 'Hi' },
}

function can(kind: RequestKind, extra: object = {}): boolean {
  const parsed = parseOpenAiRequest(kind, { ...bodies[kind], ...extra })
  if ('issues' in parsed) throw new Error(parsed.issues.message)
  return canAssembleFromStream(parsed.request)
}

describe('canAssembleFromStream', () => {
  it.each(['chat', 'completion'] as const)(
    'takes a plain %s request, with n and logprobs',
    (kind) => {
      expect(can(kind)).toBe(true)
      expect(can(kind, { n: maxChoices, logprobs: kind === 'chat' ? true : 2 })).toBe(true)
      expect(
        can(kind, { echo: false, prompt_logprobs: null, best_of: maxChoices, n: maxChoices }),
      ).toBe(true)
    },
  )

  it.each([
    ['prompt_logprobs', { prompt_logprobs: 0 }],
    ['kv_transfer_params', { kv_transfer_params: { do_remote_decode: true } }],
    ['ec_transfer_params', { ec_transfer_params: {} }],
    ['stream_options, which vLLM refuses unstreamed', { stream_options: { include_usage: true } }],
    ['echo', { echo: true }],
    ['beam search', { use_beam_search: true }],
    ['best_of above n', { best_of: 3 }],
    ['more choices than the assembler takes', { n: maxChoices + 1 }],
    ['a request that streams already', { stream: true }],
  ])('leaves out a request with %s', (_, extra) => {
    expect(can('chat', extra)).toBe(false)
    expect(can('completion', extra)).toBe(false)
  })
})
