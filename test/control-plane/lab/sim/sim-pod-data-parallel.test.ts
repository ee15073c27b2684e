import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createKvEventSubscriber } from '../../../../control-plane/kv-events/create-kv-event-subscriber.ts'
import type { EventBatch } from '../../../../control-plane/kv-events/kv-cache-event.ts'
import { requestReplay } from '../../../../control-plane/kv-events/request-replay.ts'
import type { SimPod } from '../../../../control-plane/lab/sim/sim-pod.ts'
import { extractVllmLoadSignals } from '../../../../control-plane/metrics/extract-vllm-load-signals.ts'
import { parsePrometheusText } from '../../../../control-plane/metrics/parse-prometheus-text.ts'
import { type ChatAnswer, cached, model, text, until, usePods } from '../../../support/sim-pods.ts'

const { pod, cleanups } = usePods(afterEach)

/** A chat request, with vLLM's data-parallel rank header when given. */
async function chatOn(
  target: SimPod,
  body: object,
  rank?: string,
): Promise<ChatAnswer & { text: string }> {
  const response = await fetch(`${target.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(rank === undefined ? {} : { 'X-data-parallel-rank': rank }),
    },
    body: JSON.stringify({ model, max_tokens: 2, ignore_eos: true, ...body }),
  })
  const raw = await response.text()
  return {
    status: response.status,
    headers: response.headers,
    body: JSON.parse(raw) as ChatAnswer['body'],
    text: raw,
  }
}

/**
 * Every batch on each rank's PUB socket, once every subscription is live: a prefix-cache
 * reset makes each rank publish, which is the slow-joiner probe.
 */
async function listenToRanks(target: SimPod) {
  const batches = target.kvEventsEndpoints.map(() => [] as { seq: bigint; batch: EventBatch }[])
  for (const [rank, endpoint] of target.kvEventsEndpoints.entries()) {
    const subscriber = createKvEventSubscriber({
      endpoint,
      topicPrefix: target.topic,
      onBatch: (_topic, seq, batch) => batches[rank]?.push({ seq, batch }),
      onError: (error) => {
        throw error
      },
    })
    cleanups.push(() => subscriber.close())
  }
  const heard = () => batches.every((rank) => rank.length > 0)
  for (let probe = 0; !heard() && probe < 500; probe++) {
    await fetch(`${target.url}/reset_prefix_cache`, { method: 'POST' })
    await until(heard, 20).catch(() => {})
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  for (const rank of batches) rank.length = 0
  return batches
}

const stored = (batches: readonly { batch: EventBatch }[]) =>
  batches.flatMap(({ batch }) =>
    batch.events.flatMap((e) => (e.type === 'BlockStored' ? e.blockHashes : [])),
  )

async function signals(target: SimPod, engine?: string) {
  const body = await (await fetch(`${target.url}/metrics`)).text()
  const { samples } = parsePrometheusText(body)
  return extractVllmLoadSignals(samples, model, engine === undefined ? {} : { engine })
}

const portOf = (endpoint: string) => Number(endpoint.split(':').at(-1))

describe('a simulated pod with two data-parallel ranks', () => {
  it('runs an engine per rank, each publishing on its own port with its own seq and rank', async () => {
    const target = await pod({ dataParallelSize: 2 })
    const [events0, events1] = target.kvEventsEndpoints.map(portOf)
    const [replay0, replay1] = target.replayEndpoints.map(portOf)
    // vLLM's layout: rank r on the configured ports + r.
    expect(events1).toBe((events0 ?? 0) + 1)
    expect(replay1).toBe((replay0 ?? 0) + 1)
    expect(target.kvEventsEndpoint).toBe(target.kvEventsEndpoints[0])
    const ranks = await listenToRanks(target)
    const messages = [{ role: 'user', content: text(11, 120) }]

    const first = await chatOn(target, { messages }, '1')
    expect(first.status).toBe(200)
    await until(() => stored(ranks[1] ?? []).length > 0)
    expect(stored(ranks[0] ?? [])).toEqual([])
    expect(ranks[1]?.every(({ batch }) => batch.dataParallelRank === 1)).toBe(true)
    // Rank 1 holds the prefix; rank 0, a cache of its own, does not.
    expect(cached(await chatOn(target, { messages }, '1'))).toBeGreaterThan(100)
    expect(cached(await chatOn(target, { messages }, '0'))).toBe(0)
    await until(() => stored(ranks[0] ?? []).length > 0)
    expect(ranks[0]?.every(({ batch }) => batch.dataParallelRank === 0)).toBe(true)

    // Each rank's replay socket answers for that rank's batches, numbered from 0.
    for (const [rank, endpoint] of target.replayEndpoints.entries()) {
      const replayed = await requestReplay({ endpoint, startSeq: 0n })
      expect(replayed.map((r) => r.seq)).toEqual(replayed.map((_, i) => BigInt(i)))
      expect(replayed.every((r) => r.batch.dataParallelRank === rank)).toBe(true)
      expect(replayed.length).toBeGreaterThan(0)
    }
  })

  it('exposes each rank on /metrics with its engine label', async () => {
    const target = await pod({ dataParallelSize: 2 })
    const messages = [{ role: 'user', content: text(12, 80) }]
    await chatOn(target, { messages }, '1')
    await chatOn(target, { messages }, '1')
    const rank1 = await signals(target, '1')
    const rank0 = await signals(target, '0')
    expect(rank1.engines).toEqual(['1'])
    expect(rank1.prefixCacheHits).toBeGreaterThan(0)
    expect(rank0.prefixCacheQueries).toBe(0)
    expect(rank0.numGpuBlocks).toBe(rank1.numGpuBlocks)
    expect((await signals(target)).engines).toEqual(['0', '1'])
  })

  it('balances requests without the header across the ranks, as vLLM does when they are idle', async () => {
    const target = await pod({ dataParallelSize: 2 })
    for (const seed of [21, 22, 23, 24])
      expect(
        (await chatOn(target, { messages: [{ role: 'user', content: text(seed, 20) }] })).status,
      ).toBe(200)
    const body = await (await fetch(`${target.url}/metrics`)).text()
    const successes = (engine: string) =>
      parsePrometheusText(body)
        .samples.filter(
          (s) => s.name === 'vllm:request_success_total' && s.labels.engine === engine,
        )
        .reduce((sum, s) => sum + s.value, 0)
    // Idle engines tie, and the scan's start moves on by one per request: they alternate.
    expect([successes('0'), successes('1')]).toEqual([2, 2])
  })

  it('refuses a rank out of range as vLLM does, and ignores one that is not an integer', async () => {
    const target = await pod({ dataParallelSize: 2 })
    const messages = [{ role: 'user', content: 'hello' }]
    for (const [header, shown] of [
      ['2', '2'],
      ['-1', '-1'],
      [' +0_2 ', '2'],
      ['99999999999999999999', '99999999999999999999'],
    ] as const) {
      const answer = await chatOn(target, { messages }, header)
      expect(answer.status, header).toBe(400)
      expect(answer.body.error).toEqual({
        message: `data_parallel_rank ${shown} is out of range [0, 2).`,
        type: 'BadRequestError',
        param: null,
        code: 400,
      })
    }
    for (const header of ['one', '', '1.0', '1__0'])
      expect((await chatOn(target, { messages }, header)).status, header).toBe(200)
    // The pod still serves every rank afterwards.
    expect((await chatOn(target, { messages }, '1')).status).toBe(200)
  })

  it('restarts every rank: empty caches, each rank’s seq back at 0', async () => {
    const target = await pod({ dataParallelSize: 2 })
    const messages = [{ role: 'user', content: text(13, 60) }]
    await chatOn(target, { messages }, '0')
    await chatOn(target, { messages }, '1')
    await target.restart()
    for (const endpoint of target.replayEndpoints)
      expect(await requestReplay({ endpoint, startSeq: 0n })).toEqual([])
    expect(cached(await chatOn(target, { messages }, '1'))).toBe(0)
    expect(target.kvEventsEndpoints.map(portOf)).toEqual(
      target.kvEventsEndpoints.map((_, r) => portOf(target.kvEventsEndpoint) + r),
    )
  })

  it('binds configured ports + rank, and refuses events and replay ranges that overlap', async () => {
    const { target, base } = await podOnFreePorts()
    expect(target.kvEventsEndpoints.map(portOf)).toEqual([base, base + 1, base + 2])
    expect(target.replayEndpoints.map(portOf)).toEqual([base + 3, base + 4, base + 5])
    await expect(
      pod({ podName: 'other', dataParallelSize: 2, zmqPort: 5557, replayPort: 5558 }),
    ).rejects.toThrow(/5557-5558 and the replay ports 5558-5559 overlap/)
  })
})

describe('the data-parallel rank header on a pod without data parallelism', () => {
  it('takes rank 0 and refuses any other, as vLLM checks it against a size of 1', async () => {
    const target = await pod()
    const messages = [{ role: 'user', content: 'hello' }]
    expect((await chatOn(target, { messages }, '0')).status).toBe(200)
    const refused = await chatOn(target, { messages }, '1')
    expect(refused.status).toBe(400)
    expect(refused.body.error?.message).toBe('data_parallel_rank 1 is out of range [0, 1).')
  })
})

describe('LoRA adapters of a simulated pod', () => {
  it('runs a request for an adapter under it: named in the answer, keyed into its blocks', async () => {
    const target = await pod({ loraAdapters: ['sql-lora'] })
    const [rank0] = await listenToRanks(target)
    const messages = [{ role: 'user', content: text(14, 60) }]
    const answer = await chatOn(target, { messages, model: 'sql-lora' })
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.text).model).toBe('sql-lora')
    await until(() => stored(rank0 ?? []).length > 0)
    const loraNames = (rank0 ?? []).flatMap(({ batch }) =>
      batch.events.flatMap((e) => (e.type === 'BlockStored' ? [e.loraName] : [])),
    )
    expect(new Set(loraNames)).toEqual(new Set(['sql-lora']))
    // The base model does not share the adapter's blocks, and an unknown model is a 404.
    expect(cached(await chatOn(target, { messages }))).toBe(0)
    expect(cached(await chatOn(target, { messages, model: 'sql-lora' }))).toBeGreaterThan(0)
    expect((await chatOn(target, { messages, model: 'other-lora' })).status).toBe(404)
  })
})

/** A first port of `count` consecutive ones free now (tried by listening on each). */
async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 40_000)
    const servers = []
    try {
      for (let i = 0; i < count; i++) {
        const server = createServer()
        servers.push(server)
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject)
          server.listen(base + i, '127.0.0.1', resolve)
        })
      }
      return base
    } catch {
      // Taken: another range.
    } finally {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
    }
  }
  throw new Error('no free port range')
}

describe('kinfctl sim --data-parallel-size --lora', () => {
  it('lays the ranks of each pod out on the KV-event ports + rank, 2N apart, and serves the adapter', async () => {
    const base = await freePortRange(8)
    const child = spawn(process.execPath, [
      'control-plane/kinfctl/main.ts',
      'sim',
      ...['--pods', '2', '--port', '0', '--zmq-port', String(base), '--time-scale', '20'],
      ...['--data-parallel-size', '2', '--lora', 'sql-lora', '--output', 'json'],
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
      .map((line) => JSON.parse(line) as { http: string; kvEvents: string; replay: string })
    expect(pods.map((p) => [portOf(p.kvEvents), portOf(p.replay)])).toEqual([
      [base, base + 2],
      [base + 4, base + 6],
    ])
    const answer = await fetch(`${pods[1]?.http}/v1/completions`, {
      method: 'POST',
      headers: { 'x-data-parallel-rank': '1' },
      body: JSON.stringify({ model: 'sql-lora', prompt: 'Hello', max_tokens: 2 }),
    })
    expect(answer.status).toBe(200)
    expect(((await answer.json()) as { model: string }).model).toBe('sql-lora')
    child.kill('SIGINT')
    const [code] = await once(child, 'exit')
    expect(code).toBe(0)
  })

  it('refuses a size that is not 1 to 64', async () => {
    const child = spawn(process.execPath, [
      'control-plane/kinfctl/main.ts',
      'sim',
      ...['--data-parallel-size', '0'],
    ])
    let err = ''
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
    })
    const [code] = await once(child, 'exit')
    expect(code).toBe(2)
    expect(err.split('\n')[0]).toContain('--data-parallel-size must be an integer from 1 to 64')
  })
})

/**
 * A 3-rank pod on configured ports: six ports from one a probe pod found free. Another test
 * may take one of them between the probe and the bind (the suite runs files in parallel),
 * so a bind refused as in use is tried again on another base.
 */
async function podOnFreePorts() {
  for (let attempt = 1; ; attempt++) {
    const probe = await pod({ dataParallelSize: 3 })
    const base = portOf(probe.kvEventsEndpoint)
    await probe.close()
    try {
      return {
        target: await pod({ dataParallelSize: 3, zmqPort: base, replayPort: base + 3 }),
        base,
      }
    } catch (error) {
      if (attempt >= 5 || !/cannot bind/.test((error as Error).message)) throw error
    }
  }
}
