import { describe, expect, it } from 'vitest'
import {
  mayCarryUsage,
  reportedCachedTokens,
  usageOf,
  usageOfJson,
  usageTokens,
} from '../../../shared/openai/usage.ts'

describe('the usage block', () => {
  it('is read from a response or a stream chunk, with or without cached tokens', () => {
    const vllm =
      '{"id":"x","choices":[],"usage": {"prompt_tokens":40,"total_tokens":44,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":32}}}'
    const usage = usageOfJson(vllm)
    expect(usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 4 })
    expect(usage && reportedCachedTokens(usage)).toBe(32)
    expect(usageTokens(usage)).toBe(44)
    const bare = usageOf({ usage: { prompt_tokens: 3, completion_tokens: 2 } })
    expect(bare && reportedCachedTokens(bare)).toBeNull()
    expect(usageTokens(bare)).toBe(5)
  })

  it('is null when absent, null or malformed, and token chunks are not parsed', () => {
    expect(mayCarryUsage('{"choices":[{"delta":{"content":"a"}}],"usage":null}')).toBe(false)
    expect(usageOfJson('{"choices":[],"usage":null}')).toBeNull()
    expect(usageOfJson('{"usage":{"prompt_tokens":-1}}')).toBeNull()
    expect(usageOfJson('{"usage":{')).toBeNull()
    expect(usageOf('text')).toBeNull()
    expect(usageTokens(usageOf({ usage: {} }))).toBeNull()
  })
})
