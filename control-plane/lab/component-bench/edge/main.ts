import { parseArgs } from 'node:util'
import { discardingTracer } from './discarding-tracer.ts'
import { measureEdgeCpu } from './measure-edge-cpu.ts'

/**
 * npm run bench:edge — the edge's whole request (auth, body parse, PII, quota, policy, the
 * real scorer client signing every call, response, settle) on a 32 KB chat prompt to a
 * model whose policy depends on the pool's status, in process, against a scorer that
 * answers at once; the calls to the scorer per request (round trips in a cluster), and
 * each phase alone. --tracing: the same requests again, each traced (a server span and its
 * stages' spans through the SDK's batching processor, exported nowhere), side by side.
 */
const { values } = parseArgs({
  options: {
    bytes: { type: 'string', default: String(32 * 1024) },
    requests: { type: 'string', default: '3000' },
    seed: { type: 'string', default: '1' },
    // ioredis defines a String subclass, after which V8 walks every string more slowly
    // (4-6x for charCodeAt loops here): the Node edge with REDIS_URL pays that, Workers not.
    'with-ioredis': { type: 'boolean', default: false },
    tracing: { type: 'boolean', default: false },
  },
})
if (values['with-ioredis']) await import('ioredis')
const result = await measureEdgeCpu({
  promptBytes: Number(values.bytes),
  requests: Number(values.requests),
  seed: Number(values.seed),
})
const ms = (value: number) => `${value.toFixed(3)} ms`
const line = (name: string, t: { p50Ms: number; p99Ms: number }) =>
  `  ${name.padEnd(8)} p50 ${ms(t.p50Ms)}  p99 ${ms(t.p99Ms)}\n`
process.stdout.write(
  `edge, ${result.promptBytes}-byte chat prompt, ${result.requests} requests in process${values['with-ioredis'] ? ', ioredis loaded' : ''}:\n` +
    line('request', result.request) +
    `  cpu      ${ms(result.cpuPerRequestMs)} per request (user + system)\n` +
    `  scorer   ${result.scorerCallsPerRequest} calls per request (each a round trip in a cluster), the policy depending on ${result.statusPools} pool(s)\n` +
    `  decided  ${Object.entries(result.decisions)
      .map(([by, count]) => `${by}: ${count}`)
      .join(', ')} (warm-up requests)\n` +
    line('auth', result.auth) +
    line('quota', result.quota) +
    line('pii', result.pii) +
    line('policy', result.policy),
)

if (values.tracing) {
  const traced = discardingTracer()
  const on = await measureEdgeCpu({
    promptBytes: Number(values.bytes),
    requests: Number(values.requests),
    seed: Number(values.seed),
    tracer: traced.tracer,
  })
  await traced.shutdown()
  const ratio = on.cpuPerRequestMs / result.cpuPerRequestMs
  process.stdout.write(
    `traced (${traced.exported()} spans exported to nowhere):\n` +
      line('request', on.request) +
      `  cpu      ${ms(on.cpuPerRequestMs)} per request, ${ratio.toFixed(3)}x untraced\n`,
  )
}
