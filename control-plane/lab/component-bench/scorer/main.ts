import { mkdir, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { benchDecisionLog } from './bench-decision-log.ts'
import { measureDecision, type Percentiles } from './measure-decision.ts'
import { measureProxyOverhead } from './measure-proxy-overhead.ts'

/**
 * npm run bench:scorer — the scorer's decision latency (an ~8k-token chat prompt over 32
 * pods, tokenization cache warm and cold) and what it adds to TTFT as a proxy at 200
 * concurrent streams. The index's own figures: npm run bench:index.
 */
const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    streams: { type: 'string', default: '200' },
    'phase-seconds': { type: 'string', default: '8' },
    phases: { type: 'string', default: '3' },
    tokens: { type: 'string', default: '100' },
    'itl-ms': { type: 'string', default: '20' },
    'profile-dir': { type: 'string' },
    out: { type: 'string', default: 'results/bench-scorer.json' },
    'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
  },
})
const seed = Number(values.seed)
// The decision log writes to Redis as a scorer with REDIS_URL does (memory when unreachable).
const decisionLog = await benchDecisionLog(values['redis-url'], (line) =>
  process.stderr.write(line),
)
const decision = await measureDecision({
  pods: 32,
  promptWords: 7900,
  samples: 3000,
  seed,
  decisionLog: decisionLog.recorder,
})
await decisionLog.close()
const ms = (value: number) => `${value.toFixed(3)} ms`
const times = (t: { warm: Percentiles; cold: Percentiles }) =>
  `warm p50 ${ms(t.warm.p50Ms)}, p99 ${ms(t.warm.p99Ms)}; cold p50 ${ms(t.cold.p50Ms)}, p99 ${ms(t.cold.p99Ms)}`
process.stdout.write(
  `decision, ${decision.promptTokens}-token chat prompt over ${decision.pods} pods, signature and body parse included:\n` +
    `  forward (policy decided at the edge): ${times(decision.forward)}\n` +
    `  status-dependent policy (${decision.statusDependent.calls} calls): ${times(decision.statusDependent)}\n`,
)
const arms = (t: { without: Percentiles; with: Percentiles }) =>
  `without p50 ${ms(t.without.p50Ms)}, p99 ${ms(t.without.p99Ms)}; with p50 ${ms(t.with.p50Ms)}, p99 ${ms(t.with.p99Ms)}; added p50 ${ms(t.with.p50Ms - t.without.p50Ms)}`
if (decision.decisionLog)
  process.stdout.write(
    `decision log writes (${decisionLog.where}; warm samples alternating without and with):\n` +
      `  forward:          ${arms(decision.decisionLog.forward)}\n` +
      `  status-dependent: ${arms(decision.decisionLog.statusDependent)}\n`,
  )
const proxy = await measureProxyOverhead({
  streams: Number(values.streams),
  phaseSeconds: Number(values['phase-seconds']),
  phases: Number(values.phases),
  tokens: Number(values.tokens),
  itlMs: Number(values['itl-ms']),
  ...(values['profile-dir'] === undefined ? {} : { profileDir: values['profile-dir'] }),
  env: process.env,
  seed,
})
const arm = (a: { p50Ms: number; p99Ms: number; requests: number }) =>
  `p50 ${ms(a.p50Ms)} (p99 ${ms(a.p99Ms)}, ${a.requests} requests)`
process.stdout.write(
  `proxy, ${proxy.streams} concurrent streams, TTFT:\n` +
    `  direct to the pods                      ${arm(proxy.direct)}\n` +
    `  via the scorer, backend chosen          ${arm(proxy.viaScorer)}: added p50 ${ms(proxy.addedP50Ms)}\n` +
    `  via the scorer, status-dependent (${proxy.statusDependent.calls} calls) ${arm(proxy.statusDependent)}: added p50 ${ms(proxy.statusDependentAddedP50Ms)}\n`,
)
await mkdir('results', { recursive: true })
await writeFile(values.out, `${JSON.stringify({ decision, proxy }, null, 2)}\n`)
