import { describe, expect, it } from 'vitest'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { checkJsonDepth, maxJsonDepth } from '../../../shared/openai/json-depth.ts'

/** `{"a":{"a":…1}}` with `levels` objects, as JSON.parse gives it. */
function nested(levels: number, key = 'a'): unknown {
  let value: unknown = 1
  for (let i = 0; i < levels; i++) value = { [key]: value }
  return value
}

function refusal(value: unknown): KinfError | null {
  try {
    checkJsonDepth(value)
    return null
  } catch (error) {
    if (!KinfError.isInstance(error)) throw error
    return error
  }
}

describe('the body depth limit', () => {
  it('takes maxJsonDepth levels and refuses one more, naming the field', () => {
    expect(maxJsonDepth).toBe(64)
    expect(refusal(nested(maxJsonDepth))).toBeNull()
    const body = { model: 'm', messages: [], metadata: nested(maxJsonDepth) }
    const error = refusal(body)
    expect(error).toMatchObject({ code: 'invalid_request', status: 400, param: 'metadata.a.a' })
    expect(error?.message).toMatch(/nested more than 64 levels deep/)
  })

  it('counts arrays as levels and names a field without its indices', () => {
    let list: unknown = []
    for (let i = 0; i < maxJsonDepth; i++) list = [list]
    expect(refusal({ messages: list })).toMatchObject({ param: 'messages' })
    expect(refusal({ messages: [{ content: nested(maxJsonDepth - 3) }] })).toBeNull()
    expect(refusal({ messages: [{ content: nested(maxJsonDepth - 2) }] })).toMatchObject({
      param: 'messages.0.content',
    })
  })

  it('walks a 100,000-level body without overflowing the stack', () => {
    expect(refusal({ metadata: nested(100_000) })).toMatchObject({ param: 'metadata.a.a' })
    expect(refusal('a string')).toBeNull()
    expect(refusal(null)).toBeNull()
  })
})
