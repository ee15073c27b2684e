import { afterEach, describe, expect, it } from 'vitest'
import { model, usePods } from '../../../support/sim-pods.ts'

// A simulated pod refuses a client's mistakes as vLLM does, in vLLM's words and shape
// (docs/vllm-wire.md §4.1): SamplingParams' errors are BadRequestErrors naming their
// parameter; what pydantic or FastAPI refuse before vLLM's code runs is "Bad Request".

const { pod } = usePods(afterEach)

async function post(url: string, body: string) {
  const response = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body })
  return { status: response.status, text: await response.text() }
}

const chat = (fields: object) =>
  JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 4,
    ...fields,
  })

describe('a simulated pod refusing a request', () => {
  it('answers sampling errors as SamplingParams raises them', async () => {
    const target = await pod()
    const cases: [object, object][] = [
      [
        { temperature: -1 },
        {
          message:
            'temperature must be non-negative, got -1.0. (parameter=temperature, value=-1.0)',
          type: 'BadRequestError',
          param: 'temperature',
          code: 400,
        },
      ],
      [
        { top_p: 1.5 },
        {
          message: 'top_p must be in (0, 1], got 1.5. (parameter=top_p, value=1.5)',
          type: 'BadRequestError',
          param: 'top_p',
          code: 400,
        },
      ],
      [
        { min_tokens: 8 },
        {
          message: 'min_tokens must be less than or equal to max_tokens=4, got 8.',
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      ],
      [
        { n: 3, temperature: 0 },
        {
          message: 'n must be 1 when using greedy sampling, got 3.',
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      ],
    ]
    for (const [fields, error] of cases) {
      const answer = await post(target.url, chat(fields))
      expect(answer.status).toBe(400)
      expect(JSON.parse(answer.text)).toEqual({ error })
    }
  })

  it('answers what pydantic and FastAPI refuse as "Bad Request"', async () => {
    const target = await pod()
    const options = JSON.parse(
      (await post(target.url, chat({ stream_options: { include_usage: true } }))).text,
    )
    expect(options.error).toMatchObject({
      type: 'Bad Request',
      param: 'stream_options',
      code: 400,
    })
    expect(options.error.message).toMatch(
      /^1 validation error:\n {2}\{'type': 'value_error', 'loc': \('body',\), 'msg': .*only be defined when `stream=True`/,
    )
    // An empty stream_options is falsy to vLLM's validator.
    expect((await post(target.url, chat({ stream_options: {} }))).status).toBe(200)
    const broken = JSON.parse((await post(target.url, '{"messages": [')).text)
    expect(broken.error).toMatchObject({ type: 'Bad Request', param: 'body', code: 400 })
    const typed = JSON.parse((await post(target.url, chat({ messages: 'hi' }))).text)
    expect(typed.error).toMatchObject({ type: 'Bad Request', param: 'body.messages', code: 400 })
  })

  it('answers a body nested past Python’s parser as FastAPI does, and parses one that is not', async () => {
    const target = await pod()
    const nested = (levels: number) => {
      let value = '1'
      for (let i = 0; i < levels; i++) value = `{"a":${value}}`
      return value
    }
    const deep = await post(target.url, chat({}).replace(/}$/, `,"metadata":${nested(5_000)}}`))
    expect(deep.status).toBe(400)
    expect(JSON.parse(deep.text)).toEqual({
      error: {
        message: 'There was an error parsing the body',
        type: 'Bad Request',
        param: null,
        code: 400,
      },
    })
    const parsed = await post(target.url, chat({}).replace(/}$/, `,"metadata":${nested(1_000)}}`))
    expect(parsed.status).toBe(200)
  })
})

describe('a simulated pod asked for n choices', () => {
  it('streams each choice under its index and counts every token once', async () => {
    const target = await pod()
    const response = await fetch(`${target.url}/v1/chat/completions`, {
      method: 'POST',
      body: chat({
        n: 3,
        max_tokens: 6,
        ignore_eos: true,
        stream: true,
        stream_options: { include_usage: true },
      }),
    })
    const events = (await response.text())
      .split('\n\n')
      .filter((event) => event.startsWith('data: '))
      .map((event) => event.slice(6))
    expect(events.at(-1)).toBe('[DONE]')
    const chunks = events.slice(0, -1).map(
      (event) =>
        JSON.parse(event) as {
          choices: { index: number; delta: { content?: string }; finish_reason: string | null }[]
          usage?: { prompt_tokens: number; completion_tokens: number }
        },
    )
    for (const index of [0, 1, 2]) {
      const mine = chunks.flatMap((c) => c.choices).filter((c) => c.index === index)
      expect(mine.filter((c) => c.delta.content).length, `choice ${index}`).toBe(6)
      expect(mine.at(-1)?.finish_reason).toBe('length')
    }
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(18)
  })
})
