import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createDataParallelVllmMetrics } from '../../../../control-plane/lab/sim/metrics/create-vllm-metrics.ts'
import type { VllmLoadSignals } from '../../../../control-plane/metrics/extract-vllm-load-signals.ts'
import {
  type ScrapeFailure,
  type ScrapeTarget,
  startMetricsScraper,
} from '../../../../control-plane/scorer/metrics/metrics-scraper.ts'
import { until } from '../../../support/sim-pods.ts'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const model = 'qwen3-8b'

/** A data-parallel pod's /metrics (two engines), counting the scrapes it answers. */
async function twoEnginePod() {
  const metrics = createDataParallelVllmMetrics({
    engines: 2,
    modelName: model,
    maxModelLen: 4096,
    cacheConfig: { blockSize: 16, numGpuBlocks: 500 },
    now: () => 1_700_000_000,
  })
  metrics.engines[0]?.setState({ running: 4, waiting: 2, kvCacheUsage: 0.75 })
  metrics.engines[1]?.setState({ running: 1, waiting: 0, kvCacheUsage: 0.25 })
  const served = { scrapes: 0 }
  const server = createServer((_req, res) => {
    served.scrapes++
    res.end(`${metrics.render()}process_start_time_seconds 1700000000.5\n`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise((resolve) => server.close(resolve)))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, served }
}

function scrape(targets: readonly ScrapeTarget[]) {
  const signals = new Map<string, { signals: VllmLoadSignals; startedAt: number | null }>()
  const failures = new Map<string, ScrapeFailure>()
  const scraper = startMetricsScraper({
    targets: () => targets,
    intervalMs: 60_000,
    timeoutMs: 1_000,
    onSignals: (pod, read, startedAt) => signals.set(pod, { signals: read, startedAt }),
    onFailure: (pod, failure) => failures.set(pod, failure),
  })
  cleanups.push(() => scraper.stop())
  return { signals, failures }
}

describe('the metrics scraper', () => {
  it('reads a data-parallel pod’s /metrics once a round and gives each engine its own series', async () => {
    const pod = await twoEnginePod()
    const { signals } = scrape(
      ['0', '1'].map((engine) => ({ pod: `p/dp${engine}`, model, url: pod.url, engine })),
    )
    await until(() => signals.size === 2)
    expect(pod.served.scrapes).toBe(1)
    expect(signals.get('p/dp0')).toEqual({
      signals: expect.objectContaining({ running: 4, waiting: 2, kvCacheUsage: 0.75 }),
      startedAt: 1700000000.5,
    })
    expect(signals.get('p/dp1')?.signals).toMatchObject({
      running: 1,
      waiting: 0,
      kvCacheUsage: 0.25,
      numGpuBlocks: 500,
      engines: ['1'],
    })
  })

  it('reads every engine for a target of the whole pod', async () => {
    const pod = await twoEnginePod()
    const { signals } = scrape([{ pod: 'p', model, url: pod.url, engine: null }])
    await until(() => signals.size === 1)
    expect(signals.get('p')?.signals).toMatchObject({
      running: 5,
      numGpuBlocks: 1000,
      engines: ['0', '1'],
    })
  })

  it('tells every engine of a pod that does not answer', async () => {
    const gone = await twoEnginePod()
    await cleanups.pop()?.()
    const { failures } = scrape(
      ['0', '1'].map((engine) => ({ pod: `p/dp${engine}`, model, url: gone.url, engine })),
    )
    await until(() => failures.size === 2)
    expect(failures.get('p/dp1')?.kind).toBe('refused')
  })
})
