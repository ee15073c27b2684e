import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createVllmMetrics } from '../../../control-plane/lab/sim/metrics/create-vllm-metrics.ts'
import {
  extractVllmLoadSignals,
  VllmLoadSignals,
} from '../../../control-plane/metrics/extract-vllm-load-signals.ts'
import { parsePrometheusText } from '../../../control-plane/metrics/parse-prometheus-text.ts'
import { PrometheusParseResult } from '../../../control-plane/metrics/prometheus-sample.ts'
import { fuzzParameters, fuzzTimeoutMs } from '../../support/fuzz-runs.ts'

const runs = 2_000
const model = 'Qwen/Qwen3-8B'

/** A vLLM engine's /metrics after some traffic, as the scorer's scraper reads it. */
const vllmText = (() => {
  const metrics = createVllmMetrics({
    modelName: model,
    maxModelLen: 4_096,
    cacheConfig: { blockSize: 16, numGpuBlocks: 1_000 },
    now: () => 1_786_910_601.1177013,
  })
  return metrics.render()
})()
const vllmLines = vllmText.split('\n')

/**
 * The parse never throws; its result has the declared shape, each issue a line number
 * within the body and a message, and the load signals can be read from its samples.
 */
function parsesToIssuesOrSamples(text: string): void {
  const result = parsePrometheusText(text)
  expect(PrometheusParseResult.safeParse(result).success).toBe(true)
  const lines = text.split('\n').length
  for (const issue of result.errors) {
    expect(issue.line).toBeGreaterThanOrEqual(1)
    expect(issue.line).toBeLessThanOrEqual(lines + 1)
    expect(issue.message.length).toBeGreaterThan(0)
  }
  expect(result.errorCount).toBeGreaterThanOrEqual(result.errors.length)
  expect(VllmLoadSignals.safeParse(extractVllmLoadSignals(result.samples, model)).success).toBe(
    true,
  )
}

const special = fc.constantFrom(
  '{',
  '}',
  '"',
  '\\',
  '=',
  ',',
  ' ',
  '\t',
  '#',
  '\n',
  '\r',
  '\r\n',
  ':',
  '\\n',
  '\\"',
  '\\x',
  'NaN',
  '+Inf',
  '-Inf',
  'Infinity',
  '1e309',
  '-0',
  '0x1p3',
  '1_000',
  '9'.repeat(30),
  'é',
  '\u2028',
  '\uFEFF',
  '\uD800',
  '# TYPE ',
  '# HELP ',
  'counter',
  'histogram',
  '__proto__',
  'constructor',
)
const lineEdit = fc.record({
  line: fc.nat(),
  at: fc.nat(),
  kind: fc.constantFrom('insert', 'replace', 'delete-line', 'duplicate-line', 'cut'),
  text: fc.oneof(special, fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 4 })),
})
/** vLLM's output with a few characters or lines changed. */
const mutatedVllmText = fc.array(lineEdit, { minLength: 1, maxLength: 4 }).map((edits) => {
  const lines = [...vllmLines]
  for (const edit of edits) {
    const index = edit.line % lines.length
    const line = lines[index] ?? ''
    const at = line.length === 0 ? 0 : edit.at % line.length
    if (edit.kind === 'insert') lines[index] = line.slice(0, at) + edit.text + line.slice(at)
    else if (edit.kind === 'replace')
      lines[index] = line.slice(0, at) + edit.text + line.slice(at + edit.text.length)
    else if (edit.kind === 'delete-line') lines.splice(index, 1)
    else if (edit.kind === 'duplicate-line') lines.splice(index, 0, line)
    else lines[index] = line.slice(0, at)
  }
  return lines.join('\n')
})
/** Lines of Prometheus-like tokens in random order. */
const tokenSoup = fc
  .array(
    fc.array(
      fc.oneof(special, fc.constantFrom('vllm:x', 'a', 'le', '="1"', '0.5', '1700000000000')),
      { maxLength: 12 },
    ),
    { maxLength: 20 },
  )
  .map((lines) => lines.map((tokens) => tokens.join('')).join('\n'))

/** vLLM's load-signal series, several engines, any values a pod (or a broken one) could print. */
const signalLines = fc
  .array(
    fc.record({
      name: fc.constantFrom(
        'vllm:num_requests_running',
        'vllm:num_requests_waiting',
        'vllm:kv_cache_usage_perc',
        'vllm:gpu_cache_usage_perc',
        'vllm:prefix_cache_queries_total',
        'vllm:prefix_cache_hits_total',
        'vllm:gpu_prefix_cache_hits_total',
        'vllm:cache_config_info',
      ),
      engine: fc.constantFrom('0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', undefined),
      value: fc.oneof(
        fc.double(),
        fc.constantFrom(1.7976931348623157e308, -1.7976931348623157e308, 1e308, 0, -1),
      ),
      blocks: fc.oneof(fc.constantFrom('999999999999999', 'None', '16', '0'), fc.nat().map(String)),
      blockSize: fc.constantFrom('16', '32', '0', 'None', '999999999999999'),
    }),
    { maxLength: 30 },
  )
  .map((lines) =>
    lines
      .map(({ name, engine, value, blocks, blockSize }) => {
        const labels = [
          ...(name === 'vllm:cache_config_info'
            ? [`block_size="${blockSize}"`, `num_gpu_blocks="${blocks}"`]
            : [`model_name="${model}"`]),
          ...(engine === undefined ? [] : [`engine="${engine}"`]),
        ]
        const printed = Number.isNaN(value)
          ? 'NaN'
          : value === Infinity
            ? '+Inf'
            : value === -Infinity
              ? '-Inf'
              : String(value)
        return `${name}{${labels.join(',')}} ${printed}`
      })
      .join('\n'),
  )

describe('fuzz: Prometheus text, as the scorer scrapes it', () => {
  it('reads vLLM’s own /metrics without an issue', () => {
    const result = parsePrometheusText(vllmText)
    expect(result.errors).toEqual([])
    expect(extractVllmLoadSignals(result.samples, model).numGpuBlocks).toBe(1_000)
  })

  it(
    'parses mutated vLLM output into samples and located issues, never throwing',
    () => {
      fc.assert(fc.property(mutatedVllmText, parsesToIssuesOrSamples), fuzzParameters(runs, 15_051))
    },
    fuzzTimeoutMs(runs),
  )

  it(
    'parses token soup and arbitrary text',
    () => {
      const text = fc.oneof(
        tokenSoup,
        fc.string({ maxLength: 200 }),
        fc.string({ unit: 'binary', maxLength: 200 }),
      )
      fc.assert(fc.property(text, parsesToIssuesOrSamples), fuzzParameters(runs, 15_052))
    },
    fuzzTimeoutMs(runs),
  )

  it(
    'reads load signals in their declared ranges from any values of vLLM’s series',
    () => {
      fc.assert(fc.property(signalLines, parsesToIssuesOrSamples), fuzzParameters(runs, 15_054))
    },
    fuzzTimeoutMs(runs),
  )

  it(
    'stays linear on large hostile bodies (a blowup would time out)',
    () => {
      const unit = fc.constantFrom(
        'a{',
        'b="x",',
        '\\',
        '"',
        '{',
        ' ',
        '1',
        '#',
        'le="',
        '\n',
        'a ',
      )
      const body = fc
        .tuple(
          fc.array(unit, { minLength: 1, maxLength: 4 }),
          fc.integer({ min: 10_000, max: 300_000 }),
        )
        .map(([parts, repeat]) => parts.join('').repeat(repeat))
      fc.assert(fc.property(body, parsesToIssuesOrSamples), {
        ...fuzzParameters(runs, 15_053),
        numRuns: 40,
      })
    },
    fuzzTimeoutMs(runs),
  )
})

describe('regressions the Prometheus fuzzer found', () => {
  it('a total over engines that overflows is absent, not Infinity or an inexact count', () => {
    const text = [
      `vllm:prefix_cache_queries_total{model_name="${model}",engine="0"} 1.7976931348623157e+308`,
      `vllm:prefix_cache_queries_total{model_name="${model}"} 1.7976931348623157e+308`,
      `vllm:kv_cache_usage_perc{model_name="${model}",engine="0"} 1e308`,
      `vllm:kv_cache_usage_perc{model_name="${model}",engine="1"} 1e308`,
      ...Array.from(
        { length: 10 },
        (_, i) =>
          `vllm:cache_config_info{block_size="16",engine="${i}",num_gpu_blocks="999999999999999"} 1`,
      ),
    ].join('\n')
    const signals = extractVllmLoadSignals(parsePrometheusText(text).samples, model)
    expect(signals).toMatchObject({
      prefixCacheQueries: null,
      kvCacheUsage: null,
      numGpuBlocks: null,
    })
    expect(VllmLoadSignals.safeParse(signals).success).toBe(true)
  })
})
