import { beforeAll, describe, expect, it } from 'vitest'
import { runPromtool } from '../../support/promtool.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { type ScrapedMetrics, scrapeServiceMetrics } from '../../support/scrape-service-metrics.ts'

const { uniquePrefix } = useRedisTestNamespaces()

/**
 * What promtool says about vLLM's own names, which the simulated pods keep so that
 * anything reading a real vLLM reads them (control-plane/lab/sim/metrics/vllm-metric-help.ts):
 * the `vllm:` namespace separator, and a histogram named `vllm:iteration_tokens_total`.
 */
const vllmNaming = [
  /^vllm:[a-z0-9_]+ metric names should not contain ':'$/,
  /^vllm[:_]iteration_tokens_total non-counter metrics should not have "_total" suffix$/,
]

describe('promtool check metrics on every /metrics the project serves', () => {
  let scraped: ScrapedMetrics[]
  beforeAll(async () => {
    scraped = await scrapeServiceMetrics({ redisPrefix: uniquePrefix() })
  }, 60_000)

  const of = (service: string) => {
    const found = scraped.find((entry) => entry.service === service)
    if (!found) throw new Error(`${service} was not scraped`)
    return found
  }

  it.each(['edge', 'edge, pool saturated', 'scorer', 'scorer, pool saturated', 'controller'])(
    '%s: no findings',
    (service) => {
      const { text } = of(service)
      expect(text).toMatch(/^kinference_\w+(\{.*\})? [0-9]/m) // series, not only HELP and TYPE
      expect(runPromtool(['check', 'metrics'], text)).toEqual({ status: 0, output: '' })
    },
  )

  it("simulated vLLM pod: parses, and finds nothing beyond vLLM's own names", () => {
    const { text } = of('simulated vLLM pod')
    expect(text).toMatch(/^vllm:request_success_total\{.*\} [1-9]/m)
    const run = runPromtool(['check', 'metrics'], text)
    expect(run.status).toBe(3) // lint findings; 1 would be a text that does not parse
    const beyond = run.output.split('\n').filter((line) => !vllmNaming.some((n) => n.test(line)))
    expect(beyond).toEqual([])
    // The same exposition with vLLM's separator as `_`: every other rule applies to it.
    const renamed = runPromtool(['check', 'metrics'], text.replaceAll('vllm:', 'vllm_'))
    expect(renamed.output).toBe(
      'vllm_iteration_tokens_total non-counter metrics should not have "_total" suffix',
    )
  })

  it('promtool reports an exposition that breaks the conventions or the format', () => {
    const lint = runPromtool(
      ['check', 'metrics'],
      '# HELP kinference_x_ms Time.\n# TYPE kinference_x_ms counter\nkinference_x_ms 1\n',
    )
    expect(lint.status).toBe(3)
    expect(lint.output).toMatch(/counter metrics should have "_total" suffix/)
    expect(runPromtool(['check', 'metrics'], 'kinference_x{ 1\n').status).toBe(1)
  })
})
