import { parseArgs } from 'node:util'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { parseDuration } from '../../../shared/config/parse-duration.ts'
import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { Log } from '../../../shared/logging/log.ts'
import { defaultKeyPrefix } from '../../../shared/protocol/key-prefix.ts'
import { builtinStrategies } from '../../../shared/routing/strategies/strategy-registry.ts'
import { openConfigFeed } from '../../config-store/open-config-feed.ts'
import type { PublishedSnapshot } from '../../config-store/published-snapshot.ts'
import { dataParallelEndpoints } from '../../scorer/pools/data-parallel-endpoints.ts'
import { ScorerConfig, type ScorerConfigInput, type ScorerPod } from '../../scorer/scorer-config.ts'
import { type RunningScorer, startScorer } from '../../scorer/start-scorer.ts'
import { poolIdOf } from '../../scorer/state/scorer-state.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'
import { serviceLog, serviceTracing } from '../service-telemetry.ts'
import { eppOf, metricsPortOf } from './scorer-options.ts'

export const scorerUsage = `Usage: kinfctl scorer --port P [options]

Runs the scorer: receives OpenAI chat and completions requests signed by the edge,
finds the pod whose KV cache holds most of the prompt, predicts each pod's time to
first token, and proxies to the best one. /metrics and /health (the probes') are served
on a listener of their own (--metrics-port), never on the API port. Runs until interrupted.

Options:
      --port P             listen port (0 = a free port)
      --host H             listen address (default 127.0.0.1)
      --metrics-port P     port of /metrics and /health, apart from the API (default 9090;
                           0 = a free port; off = neither is served)
      --metrics-host H     its listen address (default 127.0.0.1; 0.0.0.0 in a pod, where
                           a NetworkPolicy lets only the scrapers reach it)
      --epp-port P         also serve as a Gateway API gateway's Endpoint Picker on P: Envoy's
                           ext_proc over gRPC (FULL_DUPLEX_STREAMED or BUFFERED bodies) and
                           gRPC health (liveness, readiness); an InferencePool of
                           inference.networking.k8s.io names it in endpointPickerRef (off
                           by default; 0 = a free port). The gateway authenticates: the
                           port must be reachable only from it
      --epp-host H         its listen address (default 127.0.0.1; 0.0.0.0 in a pod)
      --epp-health-port P  also serve gRPC health alone, in plaintext, on P (the kubelet's
                           gRPC probes and GKE's health checks speak no TLS)
      --epp-tls-cert FILE  PEM certificate it presents (with --epp-tls-key); gateways dial
      --epp-tls-key FILE   an Endpoint Picker over TLS without verifying it. Without them it
                           serves plaintext gRPC (h2c)
      --config SOURCE      a snapshot file from kinfctl compile, or redis://… to follow the
                           live snapshot kinfctl controller publishes (waits for the first
                           one; later ones apply without restart; one that fails
                           verification is refused and the previous stays)
      --config-prefix P    key prefix of that store (default ${defaultKeyPrefix}, the controller's
                           --redis-prefix); the snapshot gives the pools, the backends and
                           its endpoints as the pods
      --pod SPEC           a pod the config does not list:
                           name=N,http=URL[,events=tcp://H:P][,replay=tcp://H:P][,pool=NAME]
                           [,dp=SIZE] (repeatable; pool= is a pool's name or namespace/name;
                           dp= the pod's vLLM --data-parallel-size: one endpoint per rank,
                           N/dp0, N/dp1, …, each on the events and replay ports + rank)
      --redis-prefix P     key prefix of the index, the pods' state and the decision log in
                           REDIS_URL (default ${defaultKeyPrefix}, what kinfctl inspect reads)
      --events-bind EP     also bind one SUB socket (e.g. tcp://*:5557) for pods whose
                           PUB connects to the scorer; topics kv@<pod>@<model> name them
      --drain-timeout D    when interrupted (SIGTERM), refuse new connections (/health
                           answers 503)
                           and let the requests in flight, streams included, finish for up
                           to D before stopping (default 30s; 0 stops at once)
Without --config, one pool serves:
      --model NAME         served model name (default qwen3.8-27b-fp8)
      --tokenizer SOURCE   tokenizer of the model (default qwen3): a built-in (qwen3,
                           llama3.1, gpt-oss, gemma3, deepseek-v3) or the path of a
                           Hugging Face model directory or cache snapshot
      --profile NAME       GPU profile for the initial TTFT model (default l40s-27b-fp8)
      --strategy NAME      routing strategy (default kinference)
      --max-context N      model context length (default 32768)
      --allow-unsigned     accept requests without the edge's signature (local trials only)
Environment:
  KINFERENCE_SIGNING_SECRETS  comma-separated HMAC secrets shared with the edge
  KINFERENCE_ADMIN_TOKEN      bearer token of /admin (off without it)
  REDIS_URL                   share the KV index through Redis (in memory without it), and
                              write the pods' state and the decision log there (kinfctl inspect)
  KINFERENCE_LOG_LEVEL        debug, info (default), warn or error: JSON lines on stderr, one
                              access line per request at info
  OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) export spans over OTLP/HTTP; off without.
                              OTEL_SERVICE_NAME (default kinference-scorer), OTEL_TRACES_SAMPLER
                              and the other standard OTEL_* variables apply
`

/** The options the one pool's spec is made of, by the spec's field. */
const specOptions: Record<string, string> = {
  'models.0.name': '--model',
  'models.0.tokenizer': '--tokenizer',
  'models.0.maxContextTokens': '--max-context',
  gpuProfile: '--profile',
}

/** Why the options make no pool spec, each problem under its option's name. */
function specProblems(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  return issues
    .map((issue) => {
      const field = issue.path.map(String).join('.')
      return `${specOptions[field] ?? field}: ${issue.message}`
    })
    .join('; ')
}

/** A --pod's endpoints: the pod, or one per rank of a data-parallel pod (dp=). */
export function parsePodSpec(text: string, defaultPool: string | null): ScorerPod[] {
  const fields = Object.fromEntries(
    text.split(',').map((part) => {
      const at = part.indexOf('=')
      if (at < 1) throw new UsageError(`--pod: "${part}" is not key=value`)
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()]
    }),
  )
  const known = new Set(['name', 'http', 'events', 'replay', 'pool', 'dp'])
  for (const key of Object.keys(fields))
    if (!known.has(key)) throw new UsageError(`--pod: unknown field "${key}"`)
  const pool = fields.pool ?? defaultPool
  if (!fields.name || !fields.http) throw new UsageError('--pod needs at least name= and http=')
  if (!pool)
    throw new UsageError(`--pod ${fields.name}: pool= is needed when the config has several pools`)
  const size = fields.dp === undefined ? 1 : Number(fields.dp)
  if (!Number.isInteger(size) || size < 1 || size > 64)
    throw new UsageError(`--pod ${fields.name}: dp="${fields.dp}" is not a size from 1 to 64`)
  const pod = {
    name: fields.name,
    http: fields.http,
    metrics: null,
    events: fields.events ?? null,
    replay: fields.replay ?? null,
    pool,
    dataParallelRank: null,
  }
  try {
    return dataParallelEndpoints(pod, size)
  } catch (error) {
    throw KinfError.isInstance(error) ? new UsageError(`--pod: ${error.message}`) : error
  }
}

export async function scorerCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      'metrics-port': { type: 'string', default: '9090' },
      'metrics-host': { type: 'string', default: '127.0.0.1' },
      config: { type: 'string' },
      'config-prefix': { type: 'string', default: defaultKeyPrefix },
      'redis-prefix': { type: 'string', default: defaultKeyPrefix },
      pod: { type: 'string', multiple: true, default: [] },
      'events-bind': { type: 'string' },
      model: { type: 'string', default: 'qwen3.8-27b-fp8' },
      tokenizer: { type: 'string', default: 'qwen3' },
      profile: { type: 'string', default: 'l40s-27b-fp8' },
      strategy: { type: 'string', default: 'kinference' },
      'max-context': { type: 'string', default: '32768' },
      'allow-unsigned': { type: 'boolean', default: false },
      'drain-timeout': { type: 'string', default: '30s' },
      'epp-port': { type: 'string' },
      'epp-host': { type: 'string', default: '127.0.0.1' },
      'epp-health-port': { type: 'string' },
      'epp-tls-cert': { type: 'string' },
      'epp-tls-key': { type: 'string' },
    },
  })
  if (values.port === undefined) throw new UsageError('--port is required')
  const metricsPort = metricsPortOf(values['metrics-port'])
  const drainMs = parseDuration(values['drain-timeout'])
  if (drainMs === null)
    throw new UsageError(`--drain-timeout "${values['drain-timeout']}" is not a duration (30s, 2m)`)
  const strategy = builtinStrategies.find(({ name }) => name === values.strategy)?.name
  if (strategy === undefined) throw new UsageError(`unknown --strategy "${values.strategy}"`)
  let snapshot: ConfigSnapshot | null = null
  let pools: ScorerConfigInput['pools'] = []
  let latest: PublishedSnapshot | null = null
  let following: RunningScorer | null = null
  // One JSON object per line on stderr, each request's lines with its request_id.
  const log = serviceLog(io, 'scorer')
  // Off unless an OTLP endpoint variable is set; started before anything it would outlive.
  const tracing = await serviceTracing(io, 'kinference-scorer')
  const interrupted = io.untilInterrupted()
  const source =
    values.config === undefined
      ? null
      : await openConfigFeed({
          config: values.config,
          prefix: values['config-prefix'],
          log,
          interrupted,
          onSnapshot: (published) => {
            latest = published
            if (following) void applyPublished(following, published, log)
          },
        })
  if (values.config !== undefined && source === null) {
    await tracing.shutdown()
    return exitCode.ok
  }
  if (source) {
    snapshot = source.initial.snapshot
  } else {
    const parsedSpec = InferencePoolSpec.safeParse({
      selector: { matchLabels: {} },
      targetPort: 8000,
      models: [
        {
          name: values.model,
          tokenizer: values.tokenizer,
          maxContextTokens: Number(values['max-context']),
        },
      ],
      gpuProfile: values.profile,
      routing: { strategy },
    })
    if (!parsedSpec.success) throw new UsageError(specProblems(parsedSpec.error.issues))
    pools = [{ name: 'default', spec: parsedSpec.data }]
  }
  const poolIds = snapshot
    ? Object.keys(snapshot.pools)
    : pools.map((pool) => poolIdOf({ name: pool.name, namespace: pool.namespace ?? null }))
  const defaultPool = poolIds.length === 1 ? (poolIds[0] ?? null) : null
  const secrets = (io.env.KINFERENCE_SIGNING_SECRETS ?? '').split(',').filter(Boolean)
  const parsed = ScorerConfig.safeParse({
    host: values.host,
    port: Number(values.port),
    metricsPort,
    metricsHost: values['metrics-host'],
    signingSecrets: secrets,
    allowUnsigned: values['allow-unsigned'],
    adminToken: io.env.KINFERENCE_ADMIN_TOKEN ?? null,
    redisUrl: io.env.REDIS_URL ?? null,
    redisPrefix: values['redis-prefix'],
    snapshot,
    pools,
    pods: values.pod.flatMap((spec) => parsePodSpec(spec, defaultPool)),
    eventsBind: values['events-bind'] ?? null,
    epp: eppOf(values),
  })
  if (!parsed.success)
    throw new UsageError(
      parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
    )
  if (parsed.data.signingSecrets.length === 0 && !parsed.data.allowUnsigned) {
    throw new UsageError(
      'set KINFERENCE_SIGNING_SECRETS (shared with the edge), or pass --allow-unsigned for a local trial',
    )
  }
  const scorer = await startScorer(parsed.data, log, undefined, {
    tracer: tracing.tracer,
  }).catch(async (error: unknown) => {
    await source?.feed.close()
    await tracing.shutdown()
    throw error
  })
  following = scorer
  // A version that arrived while the scorer was starting.
  if (latest !== null) void applyPublished(scorer, latest, log)
  const pods = scorer.pools.reduce((sum, pool) => sum + pool.endpoints().length, 0)
  const metrics = scorer.metricsUrl === null ? 'off' : `${scorer.metricsUrl}/metrics, /health`
  const epp =
    scorer.eppPort === null ? '' : `; endpoint picker on ${values['epp-host']}:${scorer.eppPort}`
  io.stdout(
    `scorer listening on ${scorer.url} (${scorer.pools.length} pools, ${pods} pods, index in ${parsed.data.redisUrl ? 'redis' : 'memory'}${source ? `, config from ${source.origin} version ${source.initial.version}` : ''}); metrics ${metrics}${epp}\n`,
  )
  await interrupted
  await source?.feed.close()
  if (drainMs > 0) log(`scorer draining for up to ${values['drain-timeout']}`)
  await scorer.close({ drainMs })
  await tracing.shutdown()
  return exitCode.ok
}

/** Applies a followed snapshot; requests in flight finish under the one they started with. */
async function applyPublished(
  scorer: RunningScorer,
  published: PublishedSnapshot,
  log: Log,
): Promise<void> {
  const report = await scorer.applySnapshot(published.snapshot)
  if (report.outcome === 'refused')
    log(`config: version ${published.version} ${published.hash} refused: ${report.reason}`)
  else if (report.outcome === 'applied')
    log(
      `config: version ${published.version} ${published.hash} applied (pools +${report.pools.added.length} -${report.pools.removed.length} ~${report.pools.changed.length}, pods +${report.pods.added.length} -${report.pods.removed.length})`,
    )
}
