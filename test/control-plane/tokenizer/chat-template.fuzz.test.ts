import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import { readPythonJson } from '../../../control-plane/tokenizer/read-python-json.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { fuzzParameters, fuzzTimeoutMs } from '../../support/fuzz-runs.ts'

const tokenizer = createTokenizer('qwen3')
const runs = 2_000

/** Rendered text whose ids are its encoding, or a KinfError invalid_request; nothing else. */
function renderedOrRefused(messages: unknown, options: Record<string, unknown>): void {
  let result: { text: string; tokenIds: number[] }
  try {
    result = tokenizer.applyChatTemplate(messages as never, options as never)
  } catch (error) {
    expect(KinfError.isInstance(error), String(error)).toBe(true)
    expect((error as KinfError).code).toBe('invalid_request')
    expect((error as KinfError).message.length).toBeGreaterThan(0)
    return
  }
  expect(typeof result.text).toBe('string')
  expect(result.tokenIds).toEqual(tokenizer.encode(result.text))
}

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '<|im_start|>',
    '<|im_end|>',
    '<think>',
    '</think>',
    '<tool_response>x</tool_response>',
    '{{ raise_exception("x") }}',
    '{% for %}',
    '\n\n',
    '\uD800',
  ),
)
const role = fc.oneof(
  fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool'),
  fc.constantFrom('function', 'ipython', '', 'USER', '__proto__', 'constructor'),
  fc.string({ maxLength: 8 }),
  fc.anything({ maxDepth: 1 }),
)
/** JSON text for tool-call arguments: valid, near-valid, and deeply nested. */
const argumentsJson = fc.oneof(
  fc.json({ maxDepth: 3 }),
  fc.string({ maxLength: 20 }),
  fc.constantFrom('{"a": 1e400}', '[1, 2', '"\\ud800"', 'NaN', '-0', '1.0e-7', '{"a":1,"a":2}'),
  fc.integer({ min: 100, max: 20_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc
    .integer({ min: 100, max: 20_000 })
    .map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
)
const content = fc.oneof(
  text,
  fc.constant(null),
  fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 3 }),
  fc.array(
    fc.record(
      {
        type: fc.constantFrom('image_url', 'text', 'input_audio'),
        text: fc.anything({ maxDepth: 1 }),
      },
      { requiredKeys: ['type'] },
    ),
    { maxLength: 3 },
  ),
  fc.anything({ maxDepth: 2 }),
)
const toolCall = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
    type: fc.constantFrom('function', 'tool', undefined),
    function: fc.oneof(
      fc.record({ name: text, arguments: argumentsJson }),
      fc.record(
        { name: fc.anything({ maxDepth: 1 }), arguments: fc.anything({ maxDepth: 2 }) },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: ['function'] },
)
/** A message as a client would send it, each field sometimes of a wrong type. */
const wellFormed = fc.oneof(
  fc.record({
    role: fc.constantFrom('system', 'developer', 'user'),
    content: fc.oneof(
      text,
      fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 3 }),
    ),
  }),
  fc.record(
    {
      role: fc.constant('assistant'),
      content: fc.oneof(text, fc.constant(null)),
      tool_calls: fc.array(
        fc.record({
          id: fc.string({ maxLength: 8 }),
          type: fc.constant('function'),
          function: fc.record({ name: text, arguments: argumentsJson }),
        }),
        { maxLength: 3 },
      ),
      reasoning: fc.oneof(text, fc.constant(null)),
    },
    { requiredKeys: ['role'] },
  ),
  fc.record(
    { role: fc.constant('tool'), content: text, tool_call_id: fc.string({ maxLength: 8 }) },
    { requiredKeys: ['role', 'content'] },
  ),
)
const mutated = fc
  .tuple(
    wellFormed,
    fc.constantFrom('role', 'content', 'name', 'tool_calls', 'tool_call_id', 'reasoning'),
    fc.anything({ maxDepth: 2 }),
  )
  .map(([valid, key, value]) => ({ ...valid, [key]: value }))
const message = fc.oneof(
  { weight: 6, arbitrary: wellFormed },
  { weight: 2, arbitrary: mutated },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        role,
        content,
        name: fc.oneof(text, fc.integer()),
        tool_calls: fc.oneof(
          fc.array(toolCall, { maxLength: 3 }),
          fc.constant(null),
          fc.anything({ maxDepth: 1 }),
        ),
        tool_call_id: fc.oneof(text, fc.integer()),
        reasoning: fc.oneof(text, fc.constant(null), fc.integer()),
      },
      { requiredKeys: ['role'] },
    ),
  },
)
const options = fc.record(
  {
    addGenerationPrompt: fc.oneof(fc.boolean(), fc.anything({ maxDepth: 0 })),
    continueFinalMessage: fc.boolean(),
    chatTemplateKwargs: fc.oneof(
      fc.record({ enable_thinking: fc.anything({ maxDepth: 1 }) }, { requiredKeys: [] }),
      fc.dictionary(
        fc.constantFrom(
          'tools',
          'messages',
          'enable_thinking',
          'bos_token',
          'add_generation_prompt',
          'raise_exception',
          'x',
        ),
        fc.anything({ maxDepth: 2 }),
      ),
      fc.anything({ maxDepth: 1 }),
    ),
  },
  { requiredKeys: [] },
)

describe('fuzz: the chat-template renderer', () => {
  it(
    'renders any messages array, or refuses it with invalid_request',
    () => {
      fc.assert(
        fc.property(fc.array(message, { maxLength: 6 }), options, (messages, opts) =>
          renderedOrRefused(messages, opts),
        ),
        fuzzParameters(runs, 15_007),
      )
    },
    fuzzTimeoutMs(runs),
  )

  it(
    'takes any value as messages',
    () => {
      fc.assert(
        fc.property(fc.anything({ maxDepth: 4 }), (messages) => renderedOrRefused(messages, {})),
        fuzzParameters(runs, 15_008),
      )
    },
    fuzzTimeoutMs(runs),
  )

  it('regression: tool-call arguments nested 5,000 deep are refused, not a stack overflow', () => {
    const deep = '['.repeat(5_000) + ']'.repeat(5_000)
    renderedOrRefused(
      [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: deep } }],
        },
      ],
      {},
    )
    expect(() => readPythonJson(deep)).toThrow(KinfError)
  })
})
