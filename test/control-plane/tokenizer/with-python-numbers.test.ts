import { describe, expect, it } from 'vitest'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import { promptIds } from '../../../control-plane/tokenizer/prompt-ids.ts'
import { withPythonNumbers } from '../../../control-plane/tokenizer/with-python-numbers.ts'
import { parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'

/** The type and printed value of each template value found in a JSON-like tree. */
function numbers(value: unknown): string[] {
  if (typeof value === 'number') return [`js ${value}`]
  if (Array.isArray(value)) return value.flatMap(numbers)
  if (typeof value !== 'object' || value === null) return []
  if ('type' in value && 'value' in value && typeof value.type === 'string')
    return [`${value.type} ${String((value as { value: unknown }).value)}`]
  return Object.values(value).flatMap(numbers)
}

describe('withPythonNumbers', () => {
  it('gives each number the int or float Python reads at its place in the body', () => {
    const text = '{"tools": [{"x": 50.0, "y": 50, "z": -0.0, "w": 12345678901234567890}], "n": 1.0}'
    const fields = { tools: JSON.parse(text).tools, n: 1 }
    const read = withPythonNumbers(fields, text)
    expect(numbers(read.tools)).toEqual([
      'FloatValue 50',
      'IntegerValue 50',
      'FloatValue 0',
      'IntegerValue 12345678901234567000',
    ])
    expect(numbers(read.n)).toEqual(['FloatValue 1'])
    expect(read.tools[0]).toHaveProperty('w.text', '12345678901234567890')
  })

  it('reads only the fields asked for, each from its own member, the last of a repeated key', () => {
    const text =
      '{"messages": [{"content": "a \\"}\\" ]{"}], "n": 1, "n": 2.0, "kwargs": {"x": [3.0, {"y": 4}]}}'
    const read = withPythonNumbers({ n: 2, kwargs: { x: [3, { y: 4 }] } }, text)
    expect(numbers(read.n)).toEqual(['FloatValue 2'])
    expect(numbers(read.kwargs)).toEqual(['FloatValue 3', 'IntegerValue 4'])
  })

  it('keeps the parsed fields when the text does not hold them or is not JSON', () => {
    const fields = { tools: [{ x: 50 }] }
    expect(withPythonNumbers(fields, '{"other": 1.0}')).toEqual(fields)
    expect(withPythonNumbers(fields, '{"tools": [1.0, 2.0]}')).toEqual(fields)
    expect(withPythonNumbers(fields, 'not json')).toBe(fields)
    expect(withPythonNumbers(fields, '[1.0]')).toBe(fields)
    expect(
      withPythonNumbers(fields, `{"tools": ${'['.repeat(2_000)}${']'.repeat(2_000)}}`),
    ).toEqual(fields)
    // No number that Python could read otherwise: the text is not read at all.
    const fractional = { tools: [{ x: 0.5 }] }
    expect(withPythonNumbers(fractional, 'not json')).toBe(fractional)
  })
})

describe('promptIds with the body text', () => {
  const tokenizer = createTokenizer('qwen3')
  const body = `{"messages": [{"role": "user", "content": "Hi"}], "tools": [{"type": "function",
    "function": {"name": "f", "parameters": {"type": "object", "properties": {"v": {"type": "number",
    "maximum": 50.0}}}}}], "chat_template_kwargs": {"enable_thinking": false}}`
  const parsed = parseOpenAiRequest('chat', JSON.parse(body))
  if ('issues' in parsed) throw new Error(parsed.issues.message)

  it('prints a tool schema’s float as vLLM does, which the parsed body alone cannot', () => {
    const read = tokenizer.decode(promptIds(tokenizer, parsed.request, body))
    expect(read).toContain('"maximum": 50.0}')
    expect(read).toContain('<think>\n\n</think>')
    const alone = tokenizer.decode(promptIds(tokenizer, parsed.request))
    expect(alone).toContain('"maximum": 50}')
    expect(alone.replace('"maximum": 50}', '"maximum": 50.0}')).toBe(read)
  })
})
