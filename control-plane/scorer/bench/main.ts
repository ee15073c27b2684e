import { mkdir, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { measureDecision } from './measure-decision.ts'
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
  },
})
const seed = Number(values.seed)
const decision = await measureDecision({ pods: 32, promptWords: 7900, samples: 3000, seed })
const ms = (value: number) => `${value.toFixed(3)} ms`
process.stdout.write(
  `decision, ${decision.promptTokens}-token chat prompt over ${decision.pods} pods: warm p50 ${ms(decision.warm.p50Ms)}, p99 ${ms(decision.warm.p99Ms)}; cold p50 ${ms(decision.cold.p50Ms)}, p99 ${ms(decision.cold.p99Ms)}\n`,
)
const proxy = await measureProxyOverhead({
  streams: Number(values.streams),
  phaseSeconds: Number(values['phase-seconds']),
  phases: Number(values.phases),
  tokens: Number(values.tokens),
  itlMs: Number(values['itl-ms']),
  ...(values['profile-dir'] === undefined ? {} : { profileDir: values['profile-dir'] }),
  seed,
})
process.stdout.write(
  `proxy, ${proxy.streams} concurrent streams: TTFT direct p50 ${ms(proxy.direct.p50Ms)} (p99 ${ms(proxy.direct.p99Ms)}, ${proxy.direct.requests} requests), via scorer p50 ${ms(proxy.viaScorer.p50Ms)} (p99 ${ms(proxy.viaScorer.p99Ms)}, ${proxy.viaScorer.requests} requests): added p50 ${ms(proxy.addedP50Ms)}\n`,
)
await mkdir('results', { recursive: true })
await writeFile(values.out, `${JSON.stringify({ decision, proxy }, null, 2)}\n`)
