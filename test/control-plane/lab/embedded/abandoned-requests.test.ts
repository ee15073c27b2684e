import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { start } from '../../../support/embedded-stack.ts'
import { recordingQuotaStore } from '../../../support/recording-quota-store.ts'

/**
 * A tenant pays for what it used, however it leaves: a request abandoned mid-generation, or
 * a stream cancelled half-way, on a pool of simulated vLLM pods and on the Bedrock
 * stand-in. What was processed comes from the upstream's own record: the pods' vLLM
 * counters (prompt and generation tokens processed) and the stand-in's log of the input
 * it read and the output it generated. The tenant's charge must be within 5 % of it.
 */

const quotas = recordingQuotaStore()
let stack: EmbeddedStack

beforeAll(async () => {
  // Time scale 10: a few hundred tokens a second, so a client can leave half-way.
  stack = await start({ timeScale: 10, quotas })
})
afterAll(() => stack?.close())

/** The pods' counters of prompt and generation tokens processed, summed. */
async function processedOnPods(): Promise<{ prompt: number; generation: number }> {
  let prompt = 0
  let generation = 0
  for (const pod of stack.pods) {
    const text = await (await fetch(`${pod.url}/metrics`)).text()
    prompt += sampleSum(text, 'vllm:prompt_tokens_total')
    generation += sampleSum(text, 'vllm:generation_tokens_total')
  }
  return { prompt, generation }
}

function sampleSum(text: string, name: string): number {
  let sum = 0
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  return sum
}

/** A prompt of about 1,400 tokens no pod has cached (each call's own words). */
function freshPrompt(): string {
  const tag = crypto.randomUUID()
  return Array.from({ length: 280 }, (_, i) => `${tag.slice(0, 8)}-${i} alpha bravo`).join(' ')
}

/** The one settlement of the demo tenant made after `before` settlements, once made. */
async function nextCharge(before: number): Promise<number> {
  await expect.poll(() => quotas.settlements.length, { timeout: 15_000 }).toBeGreaterThan(before)
  const settled = quotas.settlements.slice(before).filter((s) => s.account === 'demo')
  expect(settled).toHaveLength(1)
  return settled[0]?.actualTokens ?? Number.NaN
}

/** Waits until `read` gives the same value twice in a row, 200 ms apart: the work stopped. */
async function settledValue<T>(read: () => Promise<T>): Promise<T> {
  let last = await read()
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    const now = await read()
    if (JSON.stringify(now) === JSON.stringify(last)) return now
    last = now
  }
}

const post = (body: object, signal: AbortSignal) =>
  fetch(`${stack.edge.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.demoKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  })

const long = (extra: object) => ({
  model: 'qwen3.8-27b-fp8',
  messages: [{ role: 'user', content: freshPrompt() }],
  max_tokens: 20_000,
  ignore_eos: true,
  ...extra,
})

describe('a tenant leaving a local pool mid-generation', () => {
  it('is charged what the pod processed for an abandoned non-streamed request', async () => {
    const before = await settledValue(processedOnPods)
    const settlements = quotas.settlements.length
    const leave = new AbortController()
    const answer = post(long({}), leave.signal).catch((error: Error) => error)
    // Gone once the pod has generated a few hundred tokens, long before its 20,000.
    await expect
      .poll(async () => (await processedOnPods()).generation - before.generation, {
        timeout: 30_000,
      })
      .toBeGreaterThan(600)
    leave.abort()
    expect(await answer).toBeInstanceOf(Error)
    const charged = await nextCharge(settlements)
    const after = await settledValue(processedOnPods)
    const processed = after.prompt - before.prompt + (after.generation - before.generation)
    expect(after.generation - before.generation).toBeLessThan(20_000)
    expect(Math.abs(charged - processed) / processed).toBeLessThanOrEqual(0.05)
  })

  it('is charged what the pod processed for a stream cancelled half-way', async () => {
    const before = await settledValue(processedOnPods)
    const settlements = quotas.settlements.length
    const leave = new AbortController()
    const response = await post(long({ stream: true }), leave.signal)
    expect(response.status).toBe(200)
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    let streamed = ''
    // Read until some 600 tokens came (one event each), then leave.
    while ((streamed.match(/"content":"/g)?.length ?? 0) < 600) {
      const { value, done } = await reader.read()
      if (done) break
      streamed += decoder.decode(value, { stream: true })
    }
    // The client did not ask for usage: none reaches it, though the edge counted with it.
    expect(streamed).not.toContain('"usage"')
    leave.abort()
    await reader.cancel().catch(() => {})
    const charged = await nextCharge(settlements)
    const after = await settledValue(processedOnPods)
    const processed = after.prompt - before.prompt + (after.generation - before.generation)
    expect(after.generation - before.generation).toBeLessThan(20_000)
    expect(Math.abs(charged - processed) / processed).toBeLessThanOrEqual(0.05)
  })
})

describe('a tenant leaving before the first byte', () => {
  it('is charged the prompt it sent, not nothing', async () => {
    const settlements = quotas.settlements.length
    const admitted = quotas.admissions.length
    const leave = new AbortController()
    const answer = post(long({ stream: true }), leave.signal).catch((error: Error) => error)
    // Gone once admitted, while the scorer and the pod work on the prompt: no byte is back.
    await expect.poll(() => quotas.admissions.length, { interval: 1 }).toBeGreaterThan(admitted)
    leave.abort()
    expect(await answer).toBeInstanceOf(Error)
    const charged = await nextCharge(settlements)
    // The edge's estimate of the prompt (a few thousand tokens), no output.
    expect(charged).toBeGreaterThan(1_000)
    expect(charged).toBeLessThan(10_000)
  })
})

describe('a tenant leaving Bedrock mid-generation', () => {
  /** Long answers, 100 words a second: a client can leave half-way. */
  pacedBedrockAnswers()

  const provider = (extra: object) => ({
    model: 'claude-sonnet',
    messages: [{ role: 'user', content: `Please summarise: ${freshPrompt().slice(0, 1_200)}` }],
    ...extra,
  })

  /** The stand-in's record of the call that began after `calls`, once it stopped. */
  async function processedByBedrock(calls: number) {
    await expect
      .poll(() => stack.bedrock.processed.length, { timeout: 10_000 })
      .toBeGreaterThan(calls)
    const entry = stack.bedrock.processed[calls]
    if (!entry) throw new Error('no call recorded')
    await settledValue(async () => entry.outputTokens)
    return entry
  }

  it('is charged what Bedrock processed for an abandoned non-streamed request', async () => {
    const calls = stack.bedrock.processed.length
    const settlements = quotas.settlements.length
    const leave = new AbortController()
    const answer = post(provider({}), leave.signal).catch((error: Error) => error)
    await expect
      .poll(() => stack.bedrock.processed[calls]?.outputTokens ?? 0, { timeout: 10_000 })
      .toBeGreaterThan(150)
    leave.abort()
    expect(await answer).toBeInstanceOf(Error)
    const charged = await nextCharge(settlements)
    const entry = await processedByBedrock(calls)
    expect(entry.completed).toBe(false)
    const processed = entry.inputTokens + entry.outputTokens
    expect(Math.abs(charged - processed) / processed).toBeLessThanOrEqual(0.05)
  })

  it('is charged what Bedrock processed for a stream cancelled half-way', async () => {
    const calls = stack.bedrock.processed.length
    const settlements = quotas.settlements.length
    const leave = new AbortController()
    const response = await post(provider({ stream: true }), leave.signal)
    expect(response.status).toBe(200)
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let events = 0
    while (events < 150) {
      const { value, done } = await reader.read()
      if (done) break
      events += new TextDecoder().decode(value).split('\n\n').length - 1
    }
    leave.abort()
    await reader.cancel().catch(() => {})
    const charged = await nextCharge(settlements)
    const entry = await processedByBedrock(calls)
    expect(entry.completed).toBe(false)
    const processed = entry.inputTokens + entry.outputTokens
    expect(Math.abs(charged - processed) / processed).toBeLessThanOrEqual(0.05)
  })
})

function pacedBedrockAnswers(): void {
  beforeAll(() => stack.bedrock.setFaults(['words:20000', 'pace:100']))
  afterAll(() => stack.bedrock.setFaults([]))
}
