import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCountTokensBody } from '../../../../control-plane/lab/bedrock-stand-in/count-tokens-body.ts'
import { fakeInputTokens } from '../../../../control-plane/lab/bedrock-stand-in/fake-input-tokens.ts'
import {
  type FakeBedrock,
  startFakeBedrock,
} from '../../../../control-plane/lab/bedrock-stand-in/start-fake-bedrock.ts'

let fake: FakeBedrock
beforeAll(async () => {
  fake = await startFakeBedrock()
})
afterAll(async () => {
  await fake.close()
})

const sigV4 =
  'AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=' +
  '0'.repeat(64)

function countTokens(
  modelId: string,
  body: unknown,
  headers: Record<string, string> = { authorization: sigV4 },
) {
  return fetch(`${fake.url}/model/${encodeURIComponent(modelId)}/count-tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

const converse = {
  system: [{ text: 'be brief' }],
  messages: [{ role: 'user', content: [{ text: 'hello there world' }] }],
}
const base64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64')

/** The status, AWS error type and message of an answer. */
async function outcome(response: Response) {
  return {
    status: response.status,
    type: response.headers.get('x-amzn-errortype')?.split(':')[0],
    body: await response.json(),
  }
}

describe('CountTokens on the fake Bedrock', () => {
  it('answers {inputTokens} for a converse input, recorded as a count-tokens request', async () => {
    const response = await countTokens('fake.count', { input: { converse } })
    expect(await outcome(response)).toEqual({
      status: 200,
      type: undefined,
      body: { inputTokens: 5 },
    })
    expect(fake.requests.at(-1)).toMatchObject({ operation: 'count-tokens', status: 200 })
    // Counting runs no model: nothing processed.
    expect(fake.processed).toEqual([])
  })

  it('refuses malformed bodies with a ValidationException, as Bedrock does', async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /^Malformed input request: .*input/s],
      [{ input: {} }, /^Malformed input request/],
      [{ input: { converse, invokeModel: { body: base64({ prompt: 'x' }) } } }, /^Malformed/],
      [{ input: { converse: 'hello' } }, /^Malformed input request/],
      [
        { input: { converse: { ...converse, inferenceConfig: { maxTokens: 5 } } } },
        /inferenceConfig/,
      ],
      [{ input: { converse: { messages: [] } } }, /must start with a user message/],
      [
        { input: { converse: { messages: [{ role: 'user', content: [{ text: '  ' }] }] } } },
        /text field in the ContentBlock object is blank/,
      ],
      [{ input: { invokeModel: { body: 'not base64!' } } }, /^Malformed input request/],
      [{ input: { invokeModel: { body: Buffer.from('{oops').toString('base64') } } }, /reformat/],
      [{ input: { invokeModel: { body: base64({ anthropic_version: 'x' }) } } }, /reformat/],
      ['{"input":', /^Malformed input request/],
    ]
    for (const [body, message] of cases) {
      const answer = await outcome(await countTokens('fake.count', body))
      expect(answer, JSON.stringify(body)).toEqual({
        status: 400,
        type: 'ValidationException',
        body: { message: expect.stringMatching(message) },
      })
    }
  })

  it('says so for a model without CountTokens, and answers injected faults and missing auth', async () => {
    expect(
      await outcome(await countTokens('fake.count+no-count-tokens', { input: { converse } })),
    ).toEqual({
      status: 400,
      type: 'ValidationException',
      body: { message: "The provided model doesn't support counting tokens." },
    })
    const throttled = await outcome(
      await countTokens('fake.count+throttle', { input: { converse } }),
    )
    expect(throttled).toMatchObject({ status: 429, type: 'ThrottlingException' })
    const anonymous = await countTokens('fake.count', { input: { converse } }, {})
    expect(anonymous.status).toBe(403)
  })
})

describe('parseCountTokensBody: an InvokeModel body counts the texts it carries', () => {
  it('reads an Anthropic Messages body as the same texts as its Converse twin', () => {
    const anthropic = parseCountTokensBody({
      input: {
        invokeModel: {
          body: base64({
            anthropic_version: 'bedrock-2023-05-31',
            max_tokens: 100,
            system: 'You are terse',
            tools: [
              { name: 'get_weather', description: 'Get it', input_schema: { type: 'object' } },
            ],
            messages: [
              { role: 'user', content: 'Weather in Paris?' },
              {
                role: 'assistant',
                content: [
                  { type: 'text', text: 'Let me check.' },
                  { type: 'tool_use', id: 't1', name: 'get_weather', input: { city: 'Paris' } },
                ],
              },
              {
                role: 'user',
                content: [
                  { type: 'tool_result', tool_use_id: 't1', content: 'Sunny' },
                  {
                    type: 'image',
                    source: { type: 'base64', media_type: 'image/png', data: 'AA==' },
                  },
                ],
              },
            ],
          }),
        },
      },
    })
    const twin = parseCountTokensBody({
      input: {
        converse: {
          system: [{ text: 'You are terse' }],
          toolConfig: {
            tools: [
              {
                toolSpec: {
                  name: 'get_weather',
                  description: 'Get it',
                  inputSchema: { json: { type: 'object' } },
                },
              },
            ],
          },
          messages: [
            { role: 'user', content: [{ text: 'Weather in Paris?' }] },
            {
              role: 'assistant',
              content: [
                { text: 'Let me check.' },
                { toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } },
              ],
            },
            {
              role: 'user',
              content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'Sunny' }] } }],
            },
          ],
        },
      },
    })
    if (typeof anthropic === 'string' || typeof twin === 'string') throw new Error('refused')
    expect(fakeInputTokens(anthropic).total).toBe(fakeInputTokens(twin).total)
    expect(fakeInputTokens(anthropic).total).toBe(3 + 3 + 3 + (1 + 4) + 1 + (1 + 2 + 4))
  })

  it('reads a bare prompt (Llama, Mistral) or inputText (Titan) as one user message', () => {
    for (const body of [{ prompt: 'one two three' }, { inputText: 'one two three' }]) {
      const input = parseCountTokensBody({ input: { invokeModel: { body: base64(body) } } })
      if (typeof input === 'string') throw new Error(input)
      expect(fakeInputTokens(input).total).toBe(3)
    }
  })
})
