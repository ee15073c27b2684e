import { describe, expect, it } from 'vitest'
import { unallowedVllmField } from '../../../shared/openai/vllm-only-fields.ts'

describe('unallowedVllmField', () => {
  it('names the first vLLM-only field set that the tenant may not send', () => {
    expect(unallowedVllmField({ priority: -5 }, [])).toBe('priority')
    expect(unallowedVllmField({ kv_transfer_params: {} }, ['priority'])).toBe('kv_transfer_params')
    expect(unallowedVllmField({ vllm_xargs: { a: 1 }, priority: 1 }, ['priority'])).toBe(
      'vllm_xargs',
    )
  })

  it('lets through what is unset, priority 0, and what the tenant may send', () => {
    expect(unallowedVllmField({ priority: 0, request_id: null, top_k: 5 }, [])).toBeNull()
    expect(unallowedVllmField({ priority: 3 }, ['priority'])).toBeNull()
  })
})
