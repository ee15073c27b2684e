import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { requestReplay } from '../../../../control-plane/kv-events/request-replay.ts'
import { cached, chat, subscribe, text, until, usePods } from '../../../support/sim-pods.ts'

const { pod, cleanups } = usePods(afterEach)
const ask = (target: Awaited<ReturnType<typeof pod>>, seed: number, maxTokens = 2) =>
  chat(target, {
    messages: [{ role: 'user', content: text(seed, 80) }],
    max_tokens: maxTokens,
    ignore_eos: true,
  })

describe('fault injection on a simulated pod', () => {
  it('restarts like a vLLM process: empty cache, event seq back at 0', async () => {
    const target = await pod()
    await ask(target, 1)
    await ask(target, 2)
    expect(cached(await ask(target, 1))).toBeGreaterThan(0)
    const before = await requestReplay({ endpoint: target.replayEndpoint, startSeq: 0n })
    expect(before.length).toBeGreaterThanOrEqual(2)
    const restart = await fetch(`${target.url}/admin/restart`, { method: 'POST' })
    expect(restart.status).toBe(200)
    expect(cached(await ask(target, 1))).toBe(0)
    const after = await requestReplay({ endpoint: target.replayEndpoint, startSeq: 0n })
    expect(after[0]?.seq).toBe(0n)
    expect(after.length).toBeLessThan(before.length)
  })

  it('dies and comes back after a kill with downForMs', async () => {
    const target = await pod()
    const url = target.url
    const kill = await fetch(`${url}/admin/kill`, {
      method: 'POST',
      body: JSON.stringify({ downForMs: 300 }),
    })
    expect(kill.status).toBe(202)
    await until(() => !target.running)
    await expect(fetch(`${url}/health`)).rejects.toThrow()
    await until(() => target.running)
    expect((await fetch(`${url}/health`)).status).toBe(200)
    expect((await ask(target, 3)).status).toBe(200)
  })

  it('answers 500 at the configured error rate, in vLLM’s error shape', async () => {
    const target = await pod({ faults: { errorRate: 1 } })
    const failed = await ask(target, 4)
    expect(failed.status).toBe(500)
    expect(failed.body.error?.code).toBe(500)
    await fetch(`${target.url}/admin/faults`, {
      method: 'POST',
      body: JSON.stringify({ errorRate: 0 }),
    })
    expect((await ask(target, 4)).status).toBe(200)
    const bad = await fetch(`${target.url}/admin/faults`, {
      method: 'POST',
      body: JSON.stringify({ errorRate: 7 }),
    })
    expect(bad.status).toBe(400)
  })

  it('stalls a stream mid-way: tokens stop while the connection stays open', async () => {
    const target = await pod({ faults: { stallAfterTokens: 3 } })
    const controller = new AbortController()
    const response = await fetch(`${target.url}/v1/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      body: JSON.stringify({
        messages: [{ role: 'user', content: 'go' }],
        max_tokens: 20,
        ignore_eos: true,
        stream: true,
      }),
    })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let received = ''
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        received += new TextDecoder().decode(value)
      }
    })().catch(() => {})
    // The engine finishes all 20 tokens; the stream must show only the first 3.
    await until(
      () =>
        target.runtime().engine.stats.running === 0 &&
        (received.match(/"content"/g) ?? []).length >= 4,
    )
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((received.match(/"content":"[^"]/g) ?? []).length).toBe(3)
    expect(received).not.toContain('[DONE]')
    controller.abort()
    await reading
  })

  it('loses event batches it is told to drop; a replay recovers them', async () => {
    const target = await pod()
    const events = await subscribe(target)
    cleanups.push(() => events.close())
    await fetch(`${target.url}/admin/faults`, {
      method: 'POST',
      body: JSON.stringify({ dropEventRate: 1 }),
    })
    await ask(target, 5)
    await ask(target, 6)
    expect(events.batches).toEqual([])
    await fetch(`${target.url}/admin/faults`, {
      method: 'POST',
      body: JSON.stringify({ dropEventRate: 0 }),
    })
    await ask(target, 7)
    await until(() => events.batches.length > 0)
    const first = events.batches[0]?.seq ?? 0n
    const replayed = await requestReplay({ endpoint: target.replayEndpoint, startSeq: 0n })
    expect(replayed.filter((r) => r.seq < first).length).toBeGreaterThanOrEqual(2)
  })

  it('delays event batches it is told to delay, keeping their order', async () => {
    const target = await pod({ faults: { eventDelayMs: 150 } })
    const events = await subscribe(target)
    cleanups.push(() => events.close())
    await ask(target, 8)
    await ask(target, 9)
    await until(() => events.stored().length >= 2)
    const seqs = events.batches.map((b) => b.seq)
    expect(seqs).toEqual([...seqs].sort((a, b) => (a < b ? -1 : 1)))
  })
})

describe('kinfctl sim', () => {
  it('starts pods, prints where they listen, serves, and stops on SIGINT', async () => {
    const child = spawn(process.execPath, [
      'control-plane/kinfctl/main.ts',
      'sim',
      '--pods',
      '2',
      '--port',
      '0',
      '--zmq-port',
      '0',
      '--time-scale',
      '20',
      '--output',
      'json',
    ])
    cleanups.push(async () => child.kill('SIGKILL'))
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    await until(() => out.split('\n').filter(Boolean).length === 2, 30_000)
    const pods = out
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            pod: string
            http: string
            kvEvents: string
            replay: string
            topic: string
          },
      )
    expect(pods.map((p) => p.pod)).toEqual(['sim-pod-0', 'sim-pod-1'])
    expect(pods[1]?.topic).toBe('kv@sim-pod-1@qwen3.8-27b-fp8')
    const answer = await fetch(`${pods[1]?.http}/v1/completions`, {
      method: 'POST',
      body: JSON.stringify({ prompt: 'Hello', max_tokens: 2 }),
    })
    expect(answer.status).toBe(200)
    child.kill('SIGINT')
    const [code] = await once(child, 'exit')
    expect(code).toBe(0)
  })

  it('refuses bad options with usage and exit 2', async () => {
    const child = spawn(process.execPath, [
      'control-plane/kinfctl/main.ts',
      'sim',
      '--pods',
      'many',
    ])
    let err = ''
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
    })
    const [code] = await once(child, 'exit')
    expect(code).toBe(2)
    expect(err).toMatch(/--pods must be a number/)
  })
})
