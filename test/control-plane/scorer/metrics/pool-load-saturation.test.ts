import { describe, expect, it } from 'vitest'
import { poolLoadSaturation } from '../../../../control-plane/scorer/metrics/pool-load-saturation.ts'
import { InferencePoolSpec } from '../../../../shared/crd/inference-pool.ts'
import {
  type PodReport,
  poolSaturation,
  type RouteResult,
} from '../../../../shared/routing/pool-router.ts'
import { metricTotal, send, systemChat, until, words } from '../../../support/scorer-stack.ts'
import { useScorerStacks } from '../../../support/use-scorer-stacks.ts'

const spec = InferencePoolSpec.parse({
  selector: { matchLabels: {} },
  targetPort: 8000,
  models: [{ name: 'm', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
  gpuProfile: 'l40s-27b-fp8',
  saturation: { queueDepthThreshold: 4, kvCacheUtilThreshold: 0.8 },
})

/** The fields of a pod's report the gauge reads; the rest does not matter to it. */
const pod = (
  name: string,
  load: { waiting: number; kvCacheUsage: number } | null,
  healthy = true,
): PodReport =>
  ({
    name,
    healthy,
    metrics: load && { running: 0, ageMs: 0, ...load },
  }) as PodReport

describe('kinference_scorer_pool_saturation (poolLoadSaturation)', () => {
  it('is the least saturated pod’s larger ratio: queue over its threshold, KV use over its own', () => {
    expect(
      poolLoadSaturation(spec, [
        pod('a', { waiting: 2, kvCacheUsage: 0.2 }), // max(0.5, 0.25)
        pod('b', { waiting: 8, kvCacheUsage: 0.4 }), // max(2, 0.5)
      ]),
    ).toBe(0.5)
    expect(
      poolLoadSaturation(spec, [
        pod('a', { waiting: 0, kvCacheUsage: 0.96 }),
        pod('b', { waiting: 6, kvCacheUsage: 0 }),
      ]),
    ).toBe(1.2)
  })

  it('agrees with the router’s own saturation for a request predicted at no TTFT', () => {
    const pods = [
      pod('a', { waiting: 3, kvCacheUsage: 0.5 }),
      pod('b', { waiting: 1, kvCacheUsage: 0.7 }),
    ]
    const route = {
      candidates: pods.map(({ name, metrics }) => ({ name, metrics })),
      predictedTtftMs: new Map(),
    } as unknown as RouteResult
    expect(poolLoadSaturation(spec, pods)).toBe(poolSaturation(spec, route).saturation)
  })

  it('leaves out unhealthy pods while a healthy one is left, counts a pod without metrics idle', () => {
    const busy = pod('busy', { waiting: 8, kvCacheUsage: 0.9 })
    expect(poolLoadSaturation(spec, [busy, pod('down', null, false)])).toBe(2)
    expect(poolLoadSaturation(spec, [pod('down', { waiting: 8, kvCacheUsage: 0 }, false)])).toBe(2)
    expect(poolLoadSaturation(spec, [busy, pod('new', null)])).toBe(0)
  })

  it('is 1 for a pool without pods, so that an autoscaler scales it up from zero', () => {
    expect(poolLoadSaturation(spec, [])).toBe(1)
  })
})

describe("the scorer's /metrics", () => {
  const stacks = useScorerStacks()

  it('has the pool saturation gauge for each pool, as its pods’ reports give it', async () => {
    const stack = await stacks.start({ pods: 2 })
    await send(stack, '/v1/chat/completions', systemChat(words(21, 200), 'q', { stream: false }))
    await until(
      () =>
        stack.scorer.pools[0]?.router
          .podReports(performance.now())
          .every((r) => r.metrics !== null && r.metrics.waiting === 0) ?? false,
    )
    const text = await (await fetch(`${stack.scorer.metricsUrl}/metrics`)).text()
    expect(text).toContain('# TYPE kinference_scorer_pool_saturation gauge')
    expect(text).toMatch(/^kinference_scorer_pool_saturation\{pool="default"\} /m)
    const expected = poolLoadSaturation(
      stack.scorer.pools[0]?.spec ?? spec,
      stack.scorer.pools[0]?.router.podReports(performance.now()) ?? [],
    )
    expect(await metricTotal(stack, 'kinference_scorer_pool_saturation', { pool: 'default' })).toBe(
      expected,
    )
  })
})
