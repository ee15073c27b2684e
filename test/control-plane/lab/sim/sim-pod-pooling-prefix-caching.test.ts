import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { Subscriber } from 'zeromq'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import type { SimPod } from '../../../../control-plane/lab/sim/sim-pod.ts'
import { rawBatch } from '../../../support/raw-kv-events.ts'
import { model, startPod, text, until, usePods } from '../../../support/sim-pods.ts'

// A pooling pod with enablePrefixCaching is vLLM serving a causal LAST-pooling model with
// prefix caching on (docs/vllm-wire.md, "Embeddings"): each input is a prefill that reuses
// the cached prefix and caches its full blocks, with a generate pod's hashes and events.

const { pod, cleanups } = usePods(afterEach)
const tokenizer = loadSimModelAssets('qwen3').tokenizer
/** Token ids of a prompt with `count` tokens: whole blocks and a partial one for 100. */
const promptIds = (seed: number, count: number) =>
  tokenizer.encode(text(seed, count), { addSpecialTokens: false }).slice(0, count)

async function post(target: SimPod, path: string, body: object): Promise<number> {
  const response = await fetch(`${target.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, ...body }),
  })
  await response.arrayBuffer()
  return response.status
}

const embed = (target: SimPod, input: number[] | string) =>
  post(target, '/v1/embeddings', { input })

async function metrics(target: SimPod): Promise<string> {
  return (await fetch(`${target.url}/metrics`)).text()
}

function metric(body: string, name: string): number {
  const line = body.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
  return Number(line?.split(' ').at(-1))
}

/**
 * The events of every batch on a pod's PUB socket, decoded by plain msgpack (no project
 * code), once the subscription is live: a prefix-cache reset is the slow-joiner probe,
 * and what it published is dropped.
 */
async function rawEvents(target: SimPod) {
  const batches: unknown[][] = []
  const sub = new Subscriber({ linger: 0 })
  sub.connect(target.kvEventsEndpoint)
  sub.subscribe(target.topic)
  cleanups.push(async () => sub.close())
  void (async () => {
    for await (const frames of sub)
      batches.push(rawBatch(new Uint8Array(frames[2] as Buffer))[1] as unknown[])
  })().catch(() => {})
  for (let probe = 0; batches.length === 0 && probe < 500; probe++) {
    await fetch(`${target.url}/reset_prefix_cache`, { method: 'POST' })
    await until(() => batches.length > 0, 20).catch(() => {})
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  batches.length = 0
  return batches
}

/** A map-encoded event's type, or undefined. */
const typeOf = (event: unknown) => (event as { type?: unknown }).type
const stored = (batches: readonly unknown[][]) =>
  batches.flat().filter((event) => typeOf(event) === 'BlockStored')

describe('a pooling pod with prefix caching (a LAST-pooling model)', () => {
  it('publishes the BlockStored events a generate pod publishes for the same prompt', async () => {
    // Same seed (the default), so the same NONE_HASH, model name and block size.
    const generate = await pod({ podName: 'gen-pod' })
    const pooling = await pod({
      podName: 'embed-pod',
      runner: 'pooling',
      enablePrefixCaching: true,
      embeddingSize: 32,
    })
    const ids = promptIds(11, 100)
    expect(ids).toHaveLength(100)
    const generated = await rawEvents(generate)
    const embedded = await rawEvents(pooling)
    expect(await post(generate, '/v1/completions', { prompt: ids, max_tokens: 1 })).toBe(200)
    expect(await embed(pooling, ids)).toBe(200)
    await until(() => stored(generated).length > 0 && stored(embedded).length > 0)
    const [fromPooling] = stored(embedded)
    // The input's six full blocks, not its partial seventh, each with the prompt's hash.
    expect(fromPooling).toMatchObject({
      type: 'BlockStored',
      parent_block_hash: null,
      token_ids: ids.slice(0, 96),
      block_size: 16,
      medium: 'GPU',
    })
    expect((fromPooling as { block_hashes: unknown[] }).block_hashes).toHaveLength(6)
    expect(stored(embedded)).toEqual(stored(generated))
  })

  it('reuses a repeated input’s cached prefix, counted as prefix-cache hits on /metrics', async () => {
    const target = await pod({ runner: 'pooling', enablePrefixCaching: true, embeddingSize: 32 })
    const ids = promptIds(12, 3000)
    expect(await embed(target, ids)).toBe(200)
    const first = await metrics(target)
    expect(metric(first, 'vllm:prefix_cache_queries_total')).toBe(3000)
    expect(metric(first, 'vllm:prefix_cache_hits_total')).toBe(0)
    expect(await embed(target, ids)).toBe(200)
    const second = await metrics(target)
    expect(metric(second, 'vllm:prefix_cache_queries_total')).toBe(6000)
    // All but the last token may hit, in whole blocks: 2,992 of 2,999.
    expect(metric(second, 'vllm:prefix_cache_hits_total')).toBe(2992)
    // The second prefill computes 8 tokens instead of 3,000 (modelled time, not the clock).
    const prefill = 'vllm:request_prefill_time_seconds_sum'
    const firstPrefill = metric(first, prefill)
    expect(metric(second, prefill) - firstPrefill).toBeLessThan(firstPrefill / 4)
    expect(second).toMatch(/vllm:cache_config_info\{[^}]*enable_prefix_caching="True"/)
  })

  it('is off by default on a pooling pod: no events, no lookups, and says so', async () => {
    const target = await pod({ runner: 'pooling', embeddingSize: 32 })
    const ids = promptIds(13, 100)
    expect(await embed(target, ids)).toBe(200)
    expect(await embed(target, ids)).toBe(200)
    const body = await metrics(target)
    expect(metric(body, 'vllm:prefix_cache_queries_total')).toBe(0)
    expect(metric(body, 'vllm:prefix_cache_hits_total')).toBe(0)
    expect(body).toMatch(/vllm:cache_config_info\{[^}]*enable_prefix_caching="False"/)
    expect(target.runtime().publisher.seq).toBe(0n)
  })

  it('is refused off on a generate pod, which always caches', async () => {
    await expect(startPod({ enablePrefixCaching: false })).rejects.toThrow(
      /a generate pod always caches prefixes/,
    )
  })
})

describe('kinfctl sim --runner pooling --enable-prefix-caching', () => {
  it('starts pooling pods that cache their inputs’ prefixes', async () => {
    const child = spawn(process.execPath, [
      'control-plane/kinfctl/main.ts',
      'sim',
      ...['--runner', 'pooling', '--enable-prefix-caching'],
      ...['--pods', '1', '--port', '0', '--zmq-port', '0', '--time-scale', '50'],
      ...['--output', 'json'],
    ])
    cleanups.push(async () => child.kill('SIGKILL'))
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    await until(() => out.includes('\n'), 30_000)
    const { http } = JSON.parse(out) as { http: string }
    const target = { url: http } as SimPod
    const ids = promptIds(14, 40)
    expect(await embed(target, ids)).toBe(200)
    expect(await embed(target, ids)).toBe(200)
    const body = await metrics(target)
    expect(metric(body, 'vllm:prefix_cache_queries_total')).toBe(80)
    expect(metric(body, 'vllm:prefix_cache_hits_total')).toBe(32)
    child.kill('SIGINT')
    const [code] = await once(child, 'exit')
    expect(code).toBe(0)
  })
})
