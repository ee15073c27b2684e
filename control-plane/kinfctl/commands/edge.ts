import { parseArgs } from 'node:util'
import { z } from 'zod'
import { parseDuration } from '../../../shared/config/parse-duration.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { defaultKeyPrefix } from '../../../shared/protocol/key-prefix.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import type { QuotaStore } from '../../../shared/quota/quota-store.ts'
import { openConfigFeed } from '../../config-store/open-config-feed.ts'
import type { SnapshotFeed } from '../../config-store/snapshot-feed.ts'
import { createEdgeDecisionRecorder } from '../../edge/edge-decision-recorder.ts'
import { createRedisQuotaStore } from '../../edge/redis-quota-store.ts'
import { createRedisResponseStore } from '../../edge/redis-response-store.ts'
import { startEdge } from '../../edge/start-edge.ts'
import { createRedisStateStore } from '../../state/redis-state-store.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'
import { serviceLog, serviceTracing } from '../service-telemetry.ts'

export const edgeUsage = `Usage: kinfctl edge --scorer URL --config SOURCE [options]

Runs the edge on Node as its own process: the OpenAI API (/v1/chat/completions,
/v1/completions, /v1/models) with the API keys, quotas and policy of a config snapshot,
asking the scorer (requests signed with KINFERENCE_SIGNING_SECRET) and calling the
external providers the snapshot names; /healthz too. /metrics is served on a listener of
its own (--metrics-port), never on the API port. With a redis:// config
it follows the snapshots the controller publishes: each newer verified version applies
without a restart (requests in flight finish with the one they started with), a refused
one is logged and the previous one stays, and at start it waits for the first one.
Runs until interrupted.

Options:
      --port P             listen port (default 8787; 0 = a free port)
      --host H             listen address (default 127.0.0.1; 0.0.0.0 in a pod)
      --metrics-port P     port of /metrics, apart from the API (default 9091; 0 = a free
                           port; off = not served)
      --metrics-host H     its listen address (default 127.0.0.1; 0.0.0.0 in a pod, where
                           a NetworkPolicy lets only the scrapers reach it)
      --scorer URL         the scorer's base URL, e.g. http://127.0.0.1:8080, or several
                           replicas' (comma-separated): requests rotate over them, and one
                           that cannot be reached is retried on the next
      --config SOURCE      a snapshot file from kinfctl compile (read once), or
                           redis://… or rediss://… to follow the controller's snapshot store
      --config-prefix P    key prefix of that store (default ${defaultKeyPrefix}, as the controller's
                           --redis-prefix)
      --redis-prefix P     key prefix of what the edge keeps in REDIS_URL (default
                           ${defaultKeyPrefix}, as the scorer's --redis-prefix)
      --drain-timeout D    when interrupted (SIGTERM), refuse new connections and let the
                           requests in flight, streams included, finish for up to D before
                           stopping (default 30s; 0 stops at once)
      --headers-timeout D  a request's headers must all arrive within D (default 10s)
      --request-timeout D  the whole request, body included, within D (default 60s)
      --stream-stall-timeout D
                           a stream whose client reads nothing for D is cut (default 60s)
Environment:
  KINFERENCE_SIGNING_SECRET  HMAC secret shared with the scorer (required, 16+ characters)
  REDIS_URL                  keep the tenants' quotas, and the conversations /v1/responses
                             continues, in Redis, shared by every edge replica
                             (in memory without it); and write the requests the edge
                             decides alone (served by Bedrock without the scorer) to the
                             decision log there (kinfctl inspect decisions)
  AWS_*                      credentials of Bedrock providers: the AWS SDK's default chain
                             (environment, IRSA, instance role); the endpoint is the snapshot's
`

const portMessage = 'must be a port number (0 to 65535; 0 = a free port)'
const metricsPortMessage = 'must be a port number (0 to 65535; 0 = a free port) or off'
const durationMessage = 'must be a duration such as 500ms, 30s or 2m'

/** What kinfctl edge runs with, from its flags and environment. */
export const EdgeCommandOptions = z.strictObject({
  port: z.int(portMessage).min(0, portMessage).max(65_535, portMessage).default(8787),
  host: z.string().min(1, 'must not be empty').default('127.0.0.1'),
  /** Null: /metrics is not served. */
  metricsPort: z
    .int(metricsPortMessage)
    .min(0, metricsPortMessage)
    .max(65_535, metricsPortMessage)
    .nullable()
    .default(9091),
  metricsHost: z.string().min(1, 'must not be empty').default('127.0.0.1'),
  scorer: z
    .array(
      z.url({
        protocol: /^https?$/,
        error:
          "must be the scorer's base URL, e.g. http://127.0.0.1:8080 (comma-separated for several)",
      }),
      "must be the scorer's base URL, e.g. http://127.0.0.1:8080",
    )
    .min(1, "must be the scorer's base URL, e.g. http://127.0.0.1:8080"),
  config: z
    .string('must name a snapshot file from kinfctl compile, or redis://… to follow the store')
    .min(1, 'must not be empty'),
  configPrefix: z.string().min(1, 'must not be empty').default(defaultKeyPrefix),
  redisPrefix: z.string().min(1, 'must not be empty').default(defaultKeyPrefix),
  signingSecret: z
    .string('must be set: the HMAC secret shared with the scorer')
    .min(16, 'needs at least 16 characters'),
  quotaRedisUrl: z.string().nullable().default(null),
  drainTimeoutMs: z.int(durationMessage).min(0, durationMessage).default(30_000),
  // Absent: the server's and the edge's own defaults (NodeServerLimits, EdgeLimits).
  headersTimeoutMs: z.int(durationMessage).positive(durationMessage).optional(),
  requestTimeoutMs: z.int(durationMessage).positive(durationMessage).optional(),
  streamStallMs: z.int(durationMessage).positive(durationMessage).optional(),
})
export type EdgeCommandOptions = z.infer<typeof EdgeCommandOptions>

/** Where each option comes from, to name it in a refusal. */
const optionNames: Record<keyof EdgeCommandOptions, string> = {
  port: '--port',
  host: '--host',
  metricsPort: '--metrics-port',
  metricsHost: '--metrics-host',
  scorer: '--scorer',
  config: '--config',
  configPrefix: '--config-prefix',
  redisPrefix: '--redis-prefix',
  signingSecret: 'KINFERENCE_SIGNING_SECRET',
  quotaRedisUrl: 'REDIS_URL',
  drainTimeoutMs: '--drain-timeout',
  headersTimeoutMs: '--headers-timeout',
  requestTimeoutMs: '--request-timeout',
  streamStallMs: '--stream-stall-timeout',
}

/** A port flag as a number; NaN (refused by the schema) when it is not one. */
const portOf = (text: string | undefined) =>
  text === undefined ? undefined : text.trim() === '' ? Number.NaN : Number(text)

/** A duration flag in ms; NaN (refused by the schema) when it is not one. */
const durationOf = (text: string | undefined) =>
  text === undefined ? undefined : (parseDuration(text) ?? Number.NaN)

export function parseEdgeOptions(args: string[], env: CliIo['env']): EdgeCommandOptions {
  // Without allowPositionals, parseArgs refuses stray arguments itself (exit 2).
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'metrics-port': { type: 'string' },
      'metrics-host': { type: 'string' },
      scorer: { type: 'string' },
      config: { type: 'string' },
      'config-prefix': { type: 'string' },
      'redis-prefix': { type: 'string' },
      'drain-timeout': { type: 'string' },
      'headers-timeout': { type: 'string' },
      'request-timeout': { type: 'string' },
      'stream-stall-timeout': { type: 'string' },
    },
  })
  const parsed = EdgeCommandOptions.safeParse({
    port: portOf(values.port),
    host: values.host,
    metricsPort: values['metrics-port'] === 'off' ? null : portOf(values['metrics-port']),
    metricsHost: values['metrics-host'],
    scorer: values.scorer?.split(',').map((url) => url.trim()),
    config: values.config,
    configPrefix: values['config-prefix'],
    redisPrefix: values['redis-prefix'],
    signingSecret: env.KINFERENCE_SIGNING_SECRET,
    quotaRedisUrl: env.REDIS_URL || null,
    drainTimeoutMs: durationOf(values['drain-timeout']),
    headersTimeoutMs: durationOf(values['headers-timeout']),
    requestTimeoutMs: durationOf(values['request-timeout']),
    streamStallMs: durationOf(values['stream-stall-timeout']),
  })
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  const name = optionNames[issue?.path[0] as keyof EdgeCommandOptions] ?? 'options'
  throw new UsageError(`${name} ${issue?.message ?? 'is invalid'}`)
}

export async function edgeCommand(args: string[], io: CliIo): Promise<number> {
  const options = parseEdgeOptions(args, io.env)
  const log = serviceLog(io, 'edge')
  const tracing = await serviceTracing(io, 'kinference-edge')
  // Armed first: a stop while waiting for config, or right after the line is printed, is clean.
  const interrupted = io.untilInterrupted()
  const config = await openConfigFeed({
    config: options.config,
    prefix: options.configPrefix,
    log,
    interrupted,
    onSnapshot: (published) =>
      log(`config: version ${published.version} ${published.hash} applied`),
  })
  if (config === null) {
    log('edge stopped before any config arrived')
    await tracing.shutdown()
    return exitCode.ok
  }
  const { feed } = config
  const closing: (() => Promise<void>)[] = [() => tracing.shutdown(), () => feed.close()]
  const closeAll = async () => {
    for (const close of closing.splice(0).reverse()) await close()
  }
  try {
    const redis = options.quotaRedisUrl
    const prefix = options.redisPrefix
    const redisQuotas = redis
      ? await createRedisQuotaStore({ redis, prefix }).then((store) => {
          closing.push(() => store.close())
          return store
        })
      : null
    const quotas: QuotaStore = redisQuotas ?? createMemoryQuotaStore()
    // The Responses API's stored conversations, shared by the replicas like the quotas.
    const responses = redis
      ? await createRedisResponseStore({ redis, prefix }).then((store) => {
          closing.push(() => store.close())
          return store
        })
      : undefined
    // The requests it decides alone, in the decision log beside the scorers' (kinfctl inspect
    // decisions); written until the edge has stopped, then the state store closes.
    const decisions = redis
      ? await createRedisStateStore({ redis, prefix }).then((state) => {
          closing.push(() => state.close())
          const recorder = createEdgeDecisionRecorder({ store: state, log })
          closing.push(() => recorder.close())
          return recorder
        })
      : undefined
    const edge = await startEdge({
      port: options.port,
      host: options.host,
      metricsPort: options.metricsPort,
      metricsHost: options.metricsHost,
      // Read once per request by the edge app: a request keeps the snapshot it started with.
      config: async () => currentSnapshot(feed),
      scorerUrls: options.scorer,
      signingSecret: options.signingSecret,
      quotas,
      // The replicas' shared buckets, for the x-ratelimit-remaining-* headers.
      ...(redisQuotas && { quotaReader: redisQuotas.reader }),
      ...(responses && { responses }),
      ...(decisions && { decisions }),
      log,
      ...(tracing.tracer && { tracer: tracing.tracer }),
      server: {
        ...(options.headersTimeoutMs && { headersTimeoutMs: options.headersTimeoutMs }),
        ...(options.requestTimeoutMs && { requestTimeoutMs: options.requestTimeoutMs }),
      },
      ...(options.streamStallMs && {
        limits: { streamStallSeconds: options.streamStallMs / 1000 },
      }),
    })
    closing.push(() => edge.close({ drainMs: options.drainTimeoutMs }))
    const version = feed.current()?.version ?? 0
    const metrics = edge.metricsUrl === null ? 'off' : `${edge.metricsUrl}/metrics`
    io.stdout(
      `edge listening on ${edge.url} (config from ${config.origin}, version ${version}); metrics ${metrics}\n`,
    )
    await interrupted
    if (options.drainTimeoutMs > 0)
      log(`edge draining for up to ${options.drainTimeoutMs / 1000} s`)
  } finally {
    // The edge stops taking requests first, then the config, quota and state connections close.
    await closeAll()
  }
  log('edge stopped')
  return exitCode.ok
}

function currentSnapshot(feed: SnapshotFeed) {
  const published = feed.current()
  // The server only starts once the feed has a snapshot, and a feed never drops one.
  if (published === null) throw new KinfError('internal', 'edge: no config snapshot')
  return published.snapshot
}
