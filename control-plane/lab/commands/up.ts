import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import { canonicalJson } from '../../../shared/config/canonical-json.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import type { QuotaStore } from '../../../shared/quota/quota-store.ts'
import { createRedisQuotaStore } from '../../edge/redis-quota-store.ts'
import { type CliIo, exitCode, UsageError } from '../../kinfctl/cli-io.ts'
import { serviceLog, serviceTracing } from '../../kinfctl/service-telemetry.ts'
import { embeddedBanner } from '../embedded/embedded-banner.ts'
import { startEmbedded } from '../embedded/start-embedded.ts'

export const upUsage = `Usage: kinfctl up [--port P] [--metrics-port P] [--pods N] [--time-scale S]
                  [--scorer-port P] [--scorer-metrics-port P] [--snapshot FILE]

Runs the embedded default on this machine: N simulated vLLM pods per pool (l40s-27b-fp8), the
scorer in front of them, a local Bedrock-compatible server for bursting, and the edge
(OpenAI API) on Node, configured from infra/k8s/demo/embedded.yaml. Prints a demo API key.
Ctrl-C stops everything.

Options:
  --port P         edge port (default: $PORT, else 8787)
  --metrics-port P the edge's /metrics, apart from its API port (default 9091; 0 = a free
                   port; off = not served)
  --pods N         simulated pods per pool (default 3)
  --time-scale S   simulated GPU time runs S times faster than real time (default 1)
  --scorer-port P  the scorer's port (default: any free one)
  --scorer-metrics-port P
                   the scorer's /metrics and /health (default: any free one; off = neither)
  --snapshot FILE  where the demo config snapshot is written, for a Worker under
                   wrangler dev to load into KV (default .kinference/snapshot.json)
The metrics listeners are on 127.0.0.1 only; the banner prints their addresses.

Environment:
  KINFERENCE_DEMO_KEY        the demo key (kinf_demo_<secret>); a fresh one when unset
  KINFERENCE_SIGNING_SECRET  the edge-scorer HMAC secret; a fresh one when unset
  KINFERENCE_ADMIN_TOKEN     the scorer's admin token (/admin, the /ui status page); a fresh
                             one (at least 16 characters) when unset
  REDIS_URL                  keep the scorer's KV index, its shared state (kinfctl inspect) and
                             the tenants' quotas in Redis, and publish the snapshot there
`

export async function upCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      'metrics-port': { type: 'string', default: '9091' },
      pods: { type: 'string', default: '3' },
      'time-scale': { type: 'string', default: '1' },
      'scorer-port': { type: 'string', default: '0' },
      'scorer-metrics-port': { type: 'string', default: '0' },
      snapshot: { type: 'string', default: '.kinference/snapshot.json' },
    },
  })
  const scorerPort = Number(values['scorer-port'])
  if (!Number.isInteger(scorerPort) || scorerPort < 0 || scorerPort > 65_535)
    throw new UsageError('--scorer-port must be a port number')
  const metricsPort = metricsPortOf('--metrics-port', values['metrics-port'])
  const scorerMetricsPort = metricsPortOf('--scorer-metrics-port', values['scorer-metrics-port'])
  const port = Number(values.port ?? io.env.PORT ?? '8787')
  const pods = Number(values.pods)
  const timeScale = Number(values['time-scale'])
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be a port number`)
  if (!Number.isInteger(pods) || pods < 1 || pods > 64)
    throw new UsageError('--pods must be 1 to 64')
  if (!(timeScale > 0)) throw new UsageError('--time-scale must be positive')
  const redisUrl = io.env.REDIS_URL ?? null
  const log = serviceLog(io, 'embedded')
  // Off unless the OTEL_* variables name a collector (docs/tracing.md).
  const tracing = [
    await serviceTracing(io, 'kinference-edge'),
    await serviceTracing(io, 'kinference-scorer'),
  ] as const
  const redisQuotas = redisUrl ? await createRedisQuotaStore({ redis: redisUrl }) : null
  const quotas: QuotaStore & { close?: () => Promise<void> } =
    redisQuotas ?? createMemoryQuotaStore()
  const stack = await startEmbedded({
    port,
    pods,
    timeScale,
    scorerPort,
    metricsPort,
    scorerMetricsPort,
    ...(io.env.KINFERENCE_DEMO_KEY ? { demoKey: io.env.KINFERENCE_DEMO_KEY } : {}),
    ...(io.env.KINFERENCE_SIGNING_SECRET
      ? { signingSecret: io.env.KINFERENCE_SIGNING_SECRET }
      : {}),
    ...(io.env.KINFERENCE_ADMIN_TOKEN ? { adminToken: io.env.KINFERENCE_ADMIN_TOKEN } : {}),
    quotas,
    ...(redisQuotas && { quotaReader: redisQuotas.reader }),
    redisUrl,
    log,
    tracers: { edge: tracing[0].tracer, scorer: tracing[1].tracer },
  }).catch(async (error: unknown) => {
    await quotas.close?.()
    for (const each of tracing) await each.shutdown()
    throw error
  })
  await mkdir(dirname(values.snapshot), { recursive: true })
  await writeFile(values.snapshot, canonicalJson(stack.snapshot))
  io.stdout(
    embeddedBanner(stack, {
      redisUrl,
      snapshotPath: values.snapshot,
      metricsLine: metricsLine(stack.edge.metricsUrl, stack.scorer.metricsUrl),
    }),
  )
  await io.untilInterrupted()
  await stack.close()
  await quotas.close?.()
  for (const each of tracing) await each.shutdown()
  log('stopped')
  return exitCode.ok
}

/** A metrics port flag: a port number (0 = a free one), or null for off. */
function metricsPortOf(flag: string, text: string): number | null {
  if (text === 'off') return null
  const port = text.trim() === '' ? Number.NaN : Number(text)
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`${flag} must be a port number (0 = a free one) or off`)
  return port
}

/** Where Prometheus scrapes the stack: the edge's and the scorer's own listeners, not their APIs. */
function metricsLine(edge: string | null, scorer: string | null): string {
  const at = (url: string | null) => (url === null ? 'off' : `${url}/metrics`)
  return `edge ${at(edge)}, scorer ${at(scorer)}${scorer === null ? '' : ` (and ${scorer}/health)`}`
}
