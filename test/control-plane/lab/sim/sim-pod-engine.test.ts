import { afterEach, describe, expect, it } from 'vitest'
import type { SimPod } from '../../../../control-plane/lab/sim/sim-pod.ts'
import { parsePrometheusText } from '../../../../control-plane/metrics/parse-prometheus-text.ts'
import {
  cached,
  chat,
  modelledTtft,
  smallCache,
  subscribe,
  text,
  until,
  usePods,
} from '../../../support/sim-pods.ts'

const { pod, cleanups } = usePods(afterEach)

async function metric(target: SimPod, name: string): Promise<number> {
  const body = await (await fetch(`${target.url}/metrics`)).text()
  return parsePrometheusText(body).samples.find((s) => s.name === name)?.value ?? Number.NaN
}

describe('a simulated pod over HTTP (engine behaviour)', () => {
  it('reports growing cached_tokens as a prefix repeats', async () => {
    const target = await pod()
    const system = { role: 'system', content: text(1, 600) }
    const ask = (question: string) =>
      chat(target, {
        messages: [system, { role: 'user', content: question }],
        max_tokens: 4,
        ignore_eos: true,
      })
    const first = await ask('first question')
    const second = await ask('second question')
    const third = await ask('second question')
    expect(cached(first)).toBe(0)
    expect(cached(second)).toBeGreaterThan(1000)
    expect(cached(third)).toBe(Math.floor((third.body.usage.prompt_tokens - 1) / 16) * 16)
    expect(cached(third)).toBeGreaterThan(cached(second))
    expect(modelledTtft(third)).toBeLessThan(modelledTtft(first))
    expect(third.body.usage.completion_tokens).toBe(4)
  })

  it('evicts when the working set exceeds the KV cache, announcing BlockRemoved, and a repeat then misses', async () => {
    const target = await pod({ profile: smallCache(100) })
    const events = await subscribe(target)
    cleanups.push(() => events.close())
    const ask = (seed: number) =>
      chat(target, {
        messages: [{ role: 'user', content: text(seed, 150) }],
        max_tokens: 1,
        ignore_eos: true,
      })
    const first = await ask(1)
    expect(first.body.usage.prompt_tokens).toBeGreaterThan(700)
    await ask(2)
    await ask(3)
    // LRU: the first block of request 1 was freed last, so it may survive; the rest is gone.
    expect(cached(await ask(1))).toBeLessThanOrEqual(16)
    await until(() => events.removed().length > 0)
    const stored = new Set(events.stored())
    expect(events.removed().every((hash) => stored.has(hash))).toBe(true)
  })

  it('with a CPU tier, counts the loaded tokens in cached_tokens and in vLLM’s external prefix-cache counters', async () => {
    const target = await pod({
      profile: smallCache(100),
      kvEvents: { cpuOffload: { capacityBlocks: 400 } },
    })
    const ask = (seed: number) =>
      chat(target, {
        messages: [{ role: 'user', content: text(seed, 150) }],
        max_tokens: 1,
        ignore_eos: true,
      })
    const first = await ask(1)
    await ask(2)
    await ask(3)
    const again = await ask(1)
    const prompt = again.body.usage.prompt_tokens
    // Its blocks left the GPU (all but perhaps the first, freed last) for the CPU tier:
    // every full block comes back, and vLLM reports them all (the last token recomputed
    // only when the prompt fills its blocks).
    const loaded = Math.floor(prompt / 16) * 16
    expect(cached(again)).toBe(loaded === prompt ? prompt - 1 : loaded)
    expect(cached(first)).toBe(0)
    const stats = target.runtime().engine.stats
    expect(stats.prefixCacheHits + stats.externalPrefixCacheHits).toBe(loaded)
    expect(stats.externalPrefixCacheHits).toBeGreaterThanOrEqual(loaded - 16)
    expect(await metric(target, 'vllm:external_prefix_cache_hits_total')).toBe(
      stats.externalPrefixCacheHits,
    )
    expect(await metric(target, 'vllm:external_prefix_cache_queries_total')).toBe(
      stats.externalPrefixCacheQueries,
    )
    expect(await metric(target, 'vllm:prefix_cache_queries_total')).toBe(stats.prefixCacheQueries)
  })

  it('makes TTFT grow with the queue ahead of a request', async () => {
    const target = await pod()
    const long = (seed: number) => ({
      messages: [{ role: 'user', content: text(seed, 1000) }],
      max_tokens: 8,
      ignore_eos: true,
    })
    const alone = await chat(target, long(100))
    target.setFaults({ paused: true })
    const queued = [1, 2, 3, 4, 5, 6].map((seed) => chat(target, long(seed)))
    await until(() => target.runtime().engine.stats.waiting === 6)
    const probe = chat(target, long(200))
    await until(() => target.runtime().engine.stats.waiting === 7)
    target.setFaults({ paused: false })
    const behind = await probe
    await Promise.all(queued)
    expect(modelledTtft(behind)).toBeGreaterThan(3 * modelledTtft(alone))
  })

  it('preempts by recompute under memory pressure and still delivers every token', async () => {
    const target = await pod({ profile: smallCache(120) })
    const answers = await Promise.all(
      [1, 2, 3, 4].map((seed) =>
        chat(target, {
          messages: [{ role: 'user', content: text(seed, 100) }],
          max_tokens: 400,
          ignore_eos: true,
        }),
      ),
    )
    for (const answer of answers) {
      expect(answer.status).toBe(200)
      expect(answer.body.usage.completion_tokens).toBe(400)
      expect(answer.body.choices[0]?.finish_reason).toBe('length')
    }
    expect(await metric(target, 'vllm:num_preemptions_total')).toBeGreaterThan(0)
  })
})
