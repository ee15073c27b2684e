import { type ChildProcess, spawn } from 'node:child_process'
import { APIError, BadRequestError } from 'openai'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  adminPods,
  decisionOf,
  fetchSigned,
  model,
  type Stack,
  send,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// Simulated pods answer a client's mistakes as vLLM does, in vLLM's shape; the scorer hands
// them on in OpenAI's. One request's content, a mistake or a hostile body, leaves every
// pod routable; a pod whose process dies is still out of routing at once.

const stacks = useScorerStacks()

const OpenAiError = z.strictObject({
  error: z.strictObject({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
  }),
})

const user = (content: string) => [{ role: 'user', content }]

const podsReport = async (stack: Stack) => (await adminPods(stack)).pools.flatMap((p) => p.pods)

/** Requests sent together until each of `pods` has served one (the load spreads them). */
async function servedBy(stack: Stack, pods: string[]): Promise<Set<string>> {
  const served = new Set<string>()
  for (let round = 0; round < 10 && pods.some((pod) => !served.has(pod)); round++) {
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        send(stack, '/v1/chat/completions', {
          model,
          messages: user(`${words(100 * round + i, 200)} question ${i}`),
          max_tokens: 24,
          ignore_eos: true,
        }),
      ),
    )
    for (const answer of answers) {
      expect(answer.status).toBe(200)
      served.add(decisionOf(answer.headers).pod as string)
    }
  }
  return served
}

describe('a client’s mistake that only the pod sees', () => {
  it('reaches the client in OpenAI’s shape with vLLM’s words, and no pod suffers', async () => {
    const stack = await stacks.start({ pods: 2 })
    const cases: [string, object, string | null, RegExp][] = [
      ['temperature < 0', { temperature: -1 }, 'temperature', /temperature must be non-negative/],
      ['top_p > 1', { top_p: 1.5 }, 'top_p', /top_p must be in \(0, 1\], got 1\.5/],
      [
        'stream_options without stream',
        { stream_options: { include_usage: true } },
        'stream_options',
        /only be defined when `stream=True`/,
      ],
      [
        'min_tokens > max_tokens',
        { min_tokens: 8 },
        null,
        /min_tokens must be less than or equal to max_tokens=4, got 8/,
      ],
      ['n = 2, greedy', { n: 2, temperature: 0 }, null, /n must be 1 when using greedy sampling/],
      ['a streamed one', { stream: true, temperature: 3 }, 'temperature', /in \[0, 2\]/],
    ]
    for (const [what, fields, param, message] of cases) {
      for (let i = 0; i < 3; i++) {
        const answer = await send(stack, '/v1/chat/completions', {
          model,
          messages: user(`${what} ${i}`),
          max_tokens: 4,
          ...fields,
        })
        expect(answer.status, what).toBe(400)
        expect(answer.headers.get('content-type'), what).toBe('application/json')
        const body = OpenAiError.parse(JSON.parse(answer.text))
        expect(body.error, what).toMatchObject({ type: 'invalid_request_error', param })
        expect(body.error.message, what).toMatch(message)
        expect(body.error.code, what).toBe('invalid_request')
        expect(APIError.generate(400, body, undefined, answer.headers)).toBeInstanceOf(
          BadRequestError,
        )
      }
    }
    expect((await podsReport(stack)).map((pod) => pod.healthy)).toEqual([true, true])
    expect(await servedBy(stack, ['sim-pod-0', 'sim-pod-1'])).toEqual(
      new Set(['sim-pod-0', 'sim-pod-1']),
    )
  })

  it('serves n = 2 as vLLM does: two choices, the usage of both', async () => {
    const stack = await stacks.start({ pods: 1 })
    const answer = await send(stack, '/v1/chat/completions', {
      model,
      messages: user('two answers'),
      max_tokens: 5,
      ignore_eos: true,
      n: 2,
    })
    expect(answer.status).toBe(200)
    const body = JSON.parse(answer.text) as {
      choices: { index: number; finish_reason: string }[]
      usage: { completion_tokens: number }
    }
    expect(body.choices.map((c) => [c.index, c.finish_reason])).toEqual([
      [0, 'length'],
      [1, 'length'],
    ])
    expect(body.usage.completion_tokens).toBe(10)
  })
})

describe('a body nested 5,000 levels deep', () => {
  it('is a 400 at the scorer, and every pod stays routable', async () => {
    const stack = await stacks.start({ pods: 2 })
    let metadata = '1'
    for (let i = 0; i < 5_000; i++) metadata = `{"a":${metadata}}`
    for (const stream of [false, true]) {
      const hostile = `{"model":"${model}","messages":[{"role":"user","content":"hi"}],"stream":${stream},"metadata":${metadata}}`
      const answer = await send(stack, '/v1/chat/completions', hostile)
      expect(answer.status).toBe(400)
      const body = OpenAiError.parse(JSON.parse(answer.text))
      expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'metadata.a.a' })
      expect(body.error.message).toMatch(/nested more than 64 levels deep/)
      expect(answer.headers.get('x-kinference-decision')).toBeNull()
    }
    expect((await podsReport(stack)).map((pod) => pod.healthy)).toEqual([true, true])
    expect(await servedBy(stack, ['sim-pod-0', 'sim-pod-1'])).toEqual(
      new Set(['sim-pod-0', 'sim-pod-1']),
    )
  })
})

describe('a pod whose process is killed', () => {
  it('is out of routing at once; its streams end with an error event', async () => {
    const child = await simProcess('doomed-pod')
    const stack = await stacks.start({
      pods: 1,
      extraPods: [{ name: 'doomed-pod', http: child.http, events: child.events, replay: null }],
    })
    // Long streams until one runs on the doomed pod; it is killed while it streams.
    const streams = Array.from({ length: 6 }, (_, i) =>
      fetchStream(stack, {
        model,
        messages: user(`${words(i, 50)} long answer ${i}`),
        max_tokens: 400,
        ignore_eos: true,
        stream: true,
      }),
    )
    const started = await Promise.all(streams.map((s) => s.head))
    expect(started.some((pod) => pod === 'doomed-pod')).toBe(true)
    child.process.kill('SIGKILL')
    const ends = await Promise.all(streams.map((s) => s.text))
    const cut = ends.filter((_, i) => started[i] === 'doomed-pod')
    for (const text of cut) {
      expect(text).toMatch(/data: \{"error":\{"message":"the pod failed mid-stream/)
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
    }
    await until(async () =>
      (await podsReport(stack)).some((pod) => pod.name === 'doomed-pod' && !pod.healthy),
    )
    expect(await servedBy(stack, ['sim-pod-0'])).toEqual(new Set(['sim-pod-0']))
  })
})

/** A simulated pod in a process of its own (kinfctl sim), so that it can be SIGKILLed. */
async function simProcess(
  name: string,
): Promise<{ process: ChildProcess; http: string; events: string }> {
  const child = spawn(process.execPath, [
    'control-plane/kinfctl/main.ts',
    'sim',
    '--pods',
    '1',
    '--name',
    name,
    '--port',
    '0',
    '--zmq-port',
    '0',
    '--time-scale',
    '5',
    '--enable-prompt-tokens-details',
    '--output',
    'json',
  ])
  stacks.defer(() => child.kill('SIGKILL'))
  let out = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString()
  })
  await until(() => out.includes('\n'), 30_000)
  const pod = JSON.parse(out.split('\n')[0] as string) as { http: string; kvEvents: string }
  return { process: child, http: pod.http, events: pod.kvEvents }
}

/** A streamed request, signed as the edge signs: the pod it went to, then its whole text. */
function fetchStream(stack: Stack, body: object) {
  const response = fetchSigned(stack, '/v1/chat/completions', body)
  return {
    head: response.then((r) => decisionOf(r.headers).pod as string),
    text: response.then((r) => r.text()),
  }
}
