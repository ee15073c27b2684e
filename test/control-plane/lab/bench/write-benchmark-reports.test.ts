import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { computeBenchmarkMetrics } from '../../../../control-plane/lab/bench/compute-benchmark-metrics.ts'
import {
  logTicks,
  niceTicks,
  renderBenchmarkChart,
} from '../../../../control-plane/lab/bench/render-benchmark-chart.ts'
import type {
  BenchmarkRun,
  RequestRecord,
} from '../../../../control-plane/lab/bench/request-record.ts'
import {
  type BenchmarkReport,
  toReportEntry,
  writeBenchmarkReports,
} from '../../../../control-plane/lab/bench/write-benchmark-reports.ts'

/** Ten requests at `rate` req/s, each with the given TTFT and 8 tokens 20 ms apart. */
function makeRun(router: string, workload: string, rate: number, ttftMs: number): BenchmarkRun {
  const records: RequestRecord[] = Array.from({ length: 10 }, (_, i) => {
    const startMs = 10_000 + (i * 1000) / rate
    const tokenTimesMs = Array.from({ length: 8 }, (_, t) => startMs + ttftMs + 20 * t)
    return {
      id: `c${i}t0`,
      conversation: i,
      turn: 0,
      startMs,
      firstTokenMs: tokenTimesMs[0] ?? null,
      tokenTimesMs,
      endMs: (tokenTimesMs.at(-1) ?? startMs) + 1,
      promptTokens: 300,
      outputTokens: 8,
      cachedTokens: router === 'kinference' ? 240 : 0,
      pod: 'sim-pod-0',
      error: i === 9 && router === 'round-robin' ? 'HTTP 503: busy' : null,
    }
  })
  return {
    config: {
      mode: 'des',
      router,
      workload,
      profile: `poisson@${rate}`,
      rate,
      pods: 3,
      gpuProfile: 'l40s-27b-fp8',
      seed: 42,
      dataSpec: 'prompt_tokens=256,output_tokens=8,prefix_count=4,prefix_tokens=2048',
    },
    startMs: records[0]?.startMs ?? 0,
    endMs: Math.max(...records.map((r) => r.endMs)),
    records,
    prefixCache: router === 'kinference' ? { queries: 3000, hits: 2400 } : null,
    elapsedSeconds: 0.5,
  }
}

const routers = ['kinference', 'round-robin']
const rates = [4, 1, 2]
const runs = ['shared-prefix', 'multi turn/chat'].flatMap((workload) =>
  routers.flatMap((router) =>
    rates.map((rate) =>
      makeRun(router, workload, rate, (router === 'kinference' ? 100 : 700) * rate),
    ),
  ),
)

/**
 * A small XML well-formedness check: one root, tags balanced and properly nested,
 * attributes quoted and unique, no raw '<' or stray '&' in text or attribute values.
 */
function checkXml(xml: string): { elements: { name: string; attrs: Record<string, string> }[] } {
  const elements: { name: string; attrs: Record<string, string> }[] = []
  const stack: string[] = []
  let roots = 0
  const entity = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/
  const token = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<\/?[^<>]*>|[^<]+/gy
  for (const [text] of xml.matchAll(token)) {
    if (text.startsWith('<!--') || text.startsWith('<?')) continue
    if (!text.startsWith('<')) {
      if (entity.test(text)) throw new Error(`stray & in text: ${text}`)
      if (stack.length === 0 && text.trim() !== '') throw new Error('text outside the root')
      continue
    }
    const close = /^<\/([A-Za-z_][\w.:-]*)\s*>$/.exec(text)
    if (close) {
      if (stack.pop() !== close[1]) throw new Error(`mismatched </${close[1]}>`)
      continue
    }
    const open = /^<([A-Za-z_][\w.:-]*)((?:\s+[A-Za-z_][\w.:-]*="[^"<]*")*)\s*(\/?)>$/.exec(text)
    if (!open) throw new Error(`malformed tag: ${text}`)
    const attrs: Record<string, string> = {}
    for (const [, name, value] of (open[2] ?? '').matchAll(/([A-Za-z_][\w.:-]*)="([^"]*)"/g)) {
      if (name === undefined || value === undefined) continue
      if (name in attrs) throw new Error(`duplicate attribute ${name}`)
      if (entity.test(value)) throw new Error(`stray & in attribute: ${value}`)
      attrs[name] = value
    }
    if (stack.length === 0) roots++
    elements.push({ name: open[1] as string, attrs })
    if (open[3] !== '/') stack.push(open[1] as string)
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack.join('>, <')}>`)
  if (roots !== 1) throw new Error(`${roots} root elements`)
  return { elements }
}

const cleanups: string[] = []
afterEach(async () => {
  for (const dir of cleanups.splice(0)) await rm(dir, { recursive: true, force: true })
})

describe('writeBenchmarkReports', () => {
  it('writes GuideLLM-shaped JSON, a Markdown table per workload and an SVG per workload', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kinf-bench-'))
    cleanups.push(dir)
    const out = join(dir, 'nested', 'results')
    const paths = await writeBenchmarkReports(runs, out, { args: { maxRequests: 10 } })
    expect(paths.map((path) => basename(path))).toEqual([
      'benchmarks.json',
      'benchmarks.md',
      'shared-prefix.svg',
      'multi-turn-chat.svg',
    ])

    const report = JSON.parse(
      await readFile(join(out, 'benchmarks.json'), 'utf8'),
    ) as BenchmarkReport
    const pkg = JSON.parse(
      await readFile(new URL('../../../../package.json', import.meta.url), 'utf8'),
    )
    expect(report.metadata).toEqual({
      version: 1,
      kinference_version: pkg.version,
      node_version: process.version,
      platform: `${process.platform}-${process.arch}`,
    })
    expect(report.args).toEqual({ maxRequests: 10 })
    expect(report.benchmarks).toHaveLength(12)
    report.benchmarks.forEach((benchmark, i) => {
      const run = runs[i] as BenchmarkRun
      expect(benchmark.config).toEqual({
        router: run.config.router,
        workload: run.config.workload,
        profile: run.config.profile,
        rate: run.config.rate,
        mode: 'des',
        pods: 3,
        gpu_profile: 'l40s-27b-fp8',
        seed: 42,
        data: run.config.dataSpec,
      })
      // GuideLLM's path to the median TTFT, the number the comparison quotes.
      const ttft = (run.config.router === 'kinference' ? 100 : 700) * (run.config.rate ?? 0)
      expect(benchmark.metrics.time_to_first_token_ms.successful.median).toBeCloseTo(ttft, 9)
      expect(benchmark.metrics).toEqual(JSON.parse(JSON.stringify(computeBenchmarkMetrics(run))))
      expect(benchmark.scheduler_metrics.requests_made.total).toBe(10)
      expect(benchmark.scheduler_metrics.start_time).toBe(10)
    })
    expect(report.benchmarks[0]?.prefix_cache.pod_hit_rate).toBe(0.8)
    expect(report.benchmarks[3]?.prefix_cache.pod_hit_rate).toBeNull()

    const markdown = await readFile(join(out, 'benchmarks.md'), 'utf8')
    expect(markdown).toContain('## shared-prefix')
    expect(markdown).toContain('## multi turn/chat')
    expect(markdown).toContain(
      'data `prompt_tokens=256,output_tokens=8,prefix_count=4,prefix_tokens=2048` · pods 3 · GPU profile l40s-27b-fp8 · mode des · seed 42',
    )
    expect(markdown).toContain(
      '| Router | Profile | Rate | TTFT median (s) | TTFT p90 (s) | E2E median (s) | ITL median (ms) | Output tok/s | Req/s | Prefix-cache hit rate | Errors |',
    )
    const rows = markdown.split('\n').filter((line) => /^\| (kinference|round-robin) \|/.test(line))
    expect(rows).toHaveLength(12)
    // Within a workload: by router, then by rate.
    expect(rows.slice(0, 6).map((row) => row.split(' | ').slice(0, 3).join(' | '))).toEqual([
      '| kinference | poisson@1 | 1',
      '| kinference | poisson@2 | 2',
      '| kinference | poisson@4 | 4',
      '| round-robin | poisson@1 | 1',
      '| round-robin | poisson@2 | 2',
      '| round-robin | poisson@4 | 4',
    ])
    const e2e = 700 + 140 + 1 // TTFT, 7 gaps of 20 ms, 1 ms to the end
    expect(rows[1]).toBe(
      `| kinference | poisson@2 | 2 | 0.200 | 0.200 | ${((200 + 141) / 1000).toFixed(3)} | 20.0 | ${(80 / (4.5 + 0.341)).toFixed(1)} | ${(10 / (4.5 + 0.341)).toFixed(2)} | 80.0% | 0/10 |`,
    )
    expect(rows[3]).toContain(`| 0.700 | 0.700 | ${(e2e / 1000).toFixed(3)} | 20.0 |`)
    // No pod counters: the hit rate comes from usage (0 cached); one request failed.
    expect(rows[3]).toMatch(/\| 0\.0% \| 1\/10 \|$/)

    for (const [file, workload] of [
      ['shared-prefix.svg', 'shared-prefix'],
      ['multi-turn-chat.svg', 'multi turn/chat'],
    ] as const) {
      const svg = await readFile(join(out, file), 'utf8')
      const { elements } = checkXml(svg)
      expect(elements[0]?.name).toBe('svg')
      expect(elements[0]?.attrs.xmlns).toBe('http://www.w3.org/2000/svg')
      const lines = elements.filter((e) => e.name === 'polyline')
      // Two panels, one line per router in each.
      expect(lines.map((e) => e.attrs['data-router'])).toEqual([...routers, ...routers])
      for (const line of lines) expect(line.attrs.points?.split(' ')).toHaveLength(3)
      expect(svg).toContain(`>${workload}</text>`)
      for (const text of [
        'Median TTFT (log scale)',
        'Output throughput',
        'Request rate (req/s)',
        'seconds',
        'tokens/s',
      ]) {
        expect(svg).toContain(`>${text}</text>`)
      }
      for (const router of routers) expect(svg).toContain(`>${router}</text>`)
    }
  })
})

describe('renderBenchmarkChart', () => {
  const entries = runs.slice(0, 6).map(toReportEntry)

  it('plots rates left to right and larger values higher', () => {
    const { elements } = checkXml(renderBenchmarkChart('w', entries))
    const points = (router: string, panel: number) =>
      (
        elements.filter((e) => e.name === 'polyline' && e.attrs['data-router'] === router)[panel]
          ?.attrs.points ?? ''
      )
        .split(' ')
        .map((p) => p.split(',').map(Number) as [number, number])
    const ttft = points('round-robin', 0)
    expect(ttft.map(([x]) => x)).toEqual([...ttft.map(([x]) => x)].sort((a, b) => a - b))
    // TTFT grows with the rate here (700 ms × rate): SVG y decreases.
    expect(ttft[0]?.[1]).toBeGreaterThan(ttft[2]?.[1] ?? 0)
    // Kinference's line sits below round-robin's in the TTFT panel.
    const kinference = points('kinference', 0)
    for (const [i, [, y]] of kinference.entries()) expect(y).toBeGreaterThan(ttft[i]?.[1] ?? 0)
  })

  it('escapes names and falls back to one slot per profile when a run has no rate', () => {
    const odd = entries.map((entry, i) => ({
      ...entry,
      config: {
        ...entry.config,
        router: i < 3 ? 'a<b>&"c"' : "d'e",
        rate: i === 0 ? null : entry.config.rate,
        profile: i === 0 ? 'throughput@512' : entry.config.profile,
      },
    }))
    const svg = renderBenchmarkChart('x & y <z>', odd)
    const { elements } = checkXml(svg)
    expect(
      elements.filter((e) => e.name === 'polyline').map((e) => e.attrs['data-router']),
    ).toEqual([
      'a&lt;b&gt;&amp;&quot;c&quot;',
      'd&apos;e',
      'a&lt;b&gt;&amp;&quot;c&quot;',
      'd&apos;e',
    ])
    expect(svg).toContain('>throughput@512</text>')
    expect(svg).toContain('>Load profile</text>')
  })

  it('a workload with no successful requests still renders', () => {
    expect(() => checkXml(renderBenchmarkChart('empty', []))).not.toThrow()
  })

  it('draws TTFT on a log axis, so equal ratios are equal distances, and the bounds as dashed lines', () => {
    const ttftOf = (median: number) => ({
      ...entries[0],
      metrics: {
        ...entries[0]?.metrics,
        time_to_first_token_ms: { successful: { median } },
      },
    })
    const three = [0.1, 1, 10].map((seconds, i) => {
      const entry = ttftOf(seconds * 1000) as (typeof entries)[number]
      return { ...entry, config: { ...entry.config, rate: i + 1, profile: `poisson@${i + 1}` } }
    })
    const svg = renderBenchmarkChart('log', three, { ttftFloorS: 0.05, outputTokensPerSecond: 900 })
    const { elements } = checkXml(svg)
    const ys = (elements.find((e) => e.name === 'polyline')?.attrs.points ?? '')
      .split(' ')
      .map((p) => Number(p.split(',')[1]))
    const [a = 0, b = 0, c = 0] = ys
    expect(a - b).toBeCloseTo(b - c, 0)
    expect(a - b).toBeGreaterThan(10)
    const bounds = elements.filter((e) => e.name === 'line' && e.attrs.class === 'bound')
    expect(bounds).toHaveLength(2)
    // The floor (0.05 s) sits below the 0.1 s point: a larger SVG y.
    expect(Number(bounds[0]?.attrs.y1)).toBeGreaterThan(a)
    expect(svg).toContain('>zero-queue floor</text>')
    expect(svg).toContain('>fluid bound</text>')
  })
})

describe('logTicks', () => {
  it('spans whole decades around the values', () => {
    expect(logTicks(0.19, 46.9)).toEqual([0.1, 1, 10, 100])
    expect(logTicks(1, 1)).toEqual([1, 10])
    expect(logTicks(0, Number.NaN)).toEqual([0.01, 0.1, 1])
    expect(logTicks(0.01, 0.01)).toEqual([0.01, 0.1])
  })
})

describe('niceTicks', () => {
  it('covers the maximum with about five round steps from zero', () => {
    expect(niceTicks(6)).toEqual([0, 2, 4, 6])
    expect(niceTicks(7.3)).toEqual([0, 2, 4, 6, 8])
    expect(niceTicks(0.31)).toEqual([0, 0.1, 0.2, 0.3, 0.4])
    expect(niceTicks(1234)).toEqual([0, 250, 500, 750, 1000, 1250])
    expect(niceTicks(0)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1])
  })
})
