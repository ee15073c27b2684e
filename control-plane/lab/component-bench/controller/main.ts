import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import { measureController } from './measure-controller.ts'
import { controllerReport, renderControllerReport } from './render-controller-report.ts'

/**
 * npm run bench:controller — how fast a resource change reaches the scorer and the edge
 * (p50/p99), with 50 pools holding 1,000 endpoints and 100 policies; the controller's
 * memory at that size; and reconciles, status writes and versions per change (a storm
 * shows as ≫1). `kinfctl controller` runs in its own process against an in-process test
 * API server; the follower and the scorer run here.
 */
const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    changes: { type: 'string', default: '50' },
    pools: { type: 'string', default: '50' },
    'pods-per-pool': { type: 'string', default: '20' },
    policies: { type: 'string', default: '100' },
    debounce: { type: 'string', default: '100ms' },
    'quiet-ms': { type: 'string', default: '300' },
    'warmup-ms': { type: 'string', default: '3000' },
    // e.g. --max-old-space-size=128: a capped heap tells garbage not yet collected from a leak.
    'controller-node-options': { type: 'string' },
    redis: { type: 'string', default: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
    out: { type: 'string', default: 'results/controller' },
  },
})
const seed = Number(values.seed)
const options = {
  seed,
  perKind: Number(values.changes),
  shape: {
    pools: Number(values.pools),
    podsPerPool: Number(values['pods-per-pool']),
    policies: Number(values.policies),
  },
  redisUrl: values.redis,
  debounce: values.debounce,
  quietMs: Number(values['quiet-ms']),
  warmupMs: Number(values['warmup-ms']),
  controllerNodeOptions: values['controller-node-options'] ?? null,
  random: createSeededRandom(seed),
  log: (line: string) => process.stderr.write(`${line}\n`),
}
const run = await measureController(options)
const { random: _random, log: _log, redisUrl: _redisUrl, ...reported } = options
const report = controllerReport(reported, run)
const markdown = renderControllerReport(report)
process.stdout.write(markdown)
await mkdir(values.out, { recursive: true })
await writeFile(join(values.out, 'benchmark.json'), `${JSON.stringify(report, null, 2)}\n`)
await writeFile(join(values.out, 'benchmark.md'), markdown)
