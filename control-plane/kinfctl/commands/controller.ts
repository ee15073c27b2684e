import { hostname } from 'node:os'
import { parseArgs } from 'node:util'
import { parseDuration } from '../../../shared/config/parse-duration.ts'
import { defaultKeyPrefix } from '../../../shared/protocol/key-prefix.ts'
import { createCloudflareKvPublisher } from '../../config-store/cloudflare-kv-publisher.ts'
import { createRedisSnapshotStore } from '../../config-store/redis-snapshot-store.ts'
import { createControllerMetrics } from '../../controller/controller-metrics.ts'
import { createSnapshotSink } from '../../controller/snapshot-sink.ts'
import { startController } from '../../controller/start-controller.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'
import { clusterConfigOf, clusterOptions, clusterUsage } from '../cluster-options.ts'
import { serviceLog } from '../service-telemetry.ts'

export const controllerUsage = `Usage: kinfctl controller [options]

Runs the Kubernetes controller: watches the five kinference.dev/v1alpha1 kinds, Pods and
EndpointSlices; compiles them (as kinfctl compile does) into a config snapshot with each
pool's ready endpoints; publishes every new snapshot to Redis (and Workers KV); and
writes Accepted, ResolvedRefs, Ready (pools, worker sets) and Published conditions on
every resource. A change that does not validate is reported and its last accepted
version stays live. Any number of replicas: the Lease holder publishes and writes.
Runs until interrupted (SIGTERM releases the Lease).

Cluster:
${clusterUsage}  -n, --namespace NS           watch this namespace (repeatable; default: all namespaces)
Gateway API Inference Extension:
      --epp-service NAME       also take in upstream InferencePools
                               (inference.networking.k8s.io/v1) whose endpointPickerRef
                               names Service NAME (the scorer's) in their namespace: each
                               becomes a pool, and gets our entry in its status.parents
                               (default: off; a cluster without that CRD is asked again
                               every minute)
Publishing:
      --redis URL              snapshot store (default: REDIS_URL); scorers and edges follow it
      --redis-prefix P         key prefix (default ${defaultKeyPrefix})
      --keep N                 versions kept for rollback (default 10)
      --cloudflare-account ID  also publish to Workers KV: account id,
      --cloudflare-namespace ID  the KV namespace bound as CONFIG, and the API token in
                               CLOUDFLARE_API_TOKEN (from a Secret)
      --cloudflare-api URL     API base (default https://api.cloudflare.com/client/v4)
Leader election (coordination.k8s.io/v1 Lease):
      --lease-name NAME        (default kinference-controller)
      --lease-namespace NS     (default: POD_NAMESPACE, else the first --namespace, else default)
      --lease-duration D       (default 15s)
      --renew-deadline D       (default 10s)
      --retry-period D         (default 2s)
      --identity ID            (default: POD_NAME or the host name, and the process id)
Reconciling:
      --debounce D             quiet time after a change before compiling (default 100ms)
      --resync D               full reconcile period (default 5m)
      --watch-timeout D        server-side timeout of each watch (default 290s)
Probes and metrics:
      --listen HOST:PORT       /metrics, /healthz, /readyz (default 0.0.0.0:8081)

Logs: one JSON object per line on stderr (time, level, service, msg, then fields such as
kind, namespace, name); KINFERENCE_LOG_LEVEL: debug, info (default), warn or error.

Environment: REDIS_URL, CLOUDFLARE_API_TOKEN, POD_NAME, POD_NAMESPACE, KUBERNETES_SERVICE_HOST,
KUBECONFIG, KINFERENCE_LOG_LEVEL.
`

const durationFlags = [
  'lease-duration',
  'renew-deadline',
  'retry-period',
  'debounce',
  'resync',
  'watch-timeout',
] as const

export async function controllerCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      ...clusterOptions,
      namespace: { type: 'string', short: 'n', multiple: true, default: [] },
      redis: { type: 'string' },
      'redis-prefix': { type: 'string', default: defaultKeyPrefix },
      keep: { type: 'string', default: '10' },
      'cloudflare-account': { type: 'string' },
      'cloudflare-namespace': { type: 'string' },
      'cloudflare-api': { type: 'string' },
      'lease-name': { type: 'string', default: 'kinference-controller' },
      'lease-namespace': { type: 'string' },
      'lease-duration': { type: 'string', default: '15s' },
      'renew-deadline': { type: 'string', default: '10s' },
      'retry-period': { type: 'string', default: '2s' },
      identity: { type: 'string' },
      debounce: { type: 'string', default: '100ms' },
      resync: { type: 'string', default: '5m' },
      'watch-timeout': { type: 'string', default: '290s' },
      listen: { type: 'string', default: '0.0.0.0:8081' },
      'epp-service': { type: 'string' },
    },
  })
  const durations = Object.fromEntries(
    durationFlags.map((flag) => {
      const ms = parseDuration(values[flag])
      if (ms === null) throw new UsageError(`--${flag} must be a duration such as 500ms, 15s or 2m`)
      return [flag, ms]
    }),
  ) as Record<(typeof durationFlags)[number], number>
  const listen = /^(.+):(\d+)$/.exec(values.listen)
  if (!listen) throw new UsageError('--listen must be HOST:PORT')
  const redisUrl = values.redis ?? io.env.REDIS_URL
  if (!redisUrl)
    throw new UsageError(
      '--redis (or REDIS_URL) is required: scorers and edges follow the snapshot there',
    )
  const keep = Number(values.keep)
  if (!Number.isInteger(keep) || keep < 1) throw new UsageError('--keep must be a positive integer')
  const cloudflare = cloudflareOf(values, io.env)
  const log = serviceLog(io, 'controller')
  const kubeConfig = clusterConfigOf(values, io.env)
  // Armed before anything starts: a SIGTERM during start-up still stops cleanly.
  const interrupted = io.untilInterrupted()
  const store = await createRedisSnapshotStore({
    redis: redisUrl,
    prefix: values['redis-prefix'],
    keep,
  })
  const metrics = createControllerMetrics(() => Date.now() / 1000)
  const identity = values.identity ?? `${io.env.POD_NAME ?? hostname()}_${process.pid}`
  const controller = await startController(
    kubeConfig,
    createSnapshotSink({ store, cloudflare, metrics, nowMs: Date.now }),
    {
      namespaces: values.namespace,
      eppService: values['epp-service'] ?? null,
      identity,
      lease: {
        name: values['lease-name'],
        namespace:
          values['lease-namespace'] ?? io.env.POD_NAMESPACE ?? values.namespace[0] ?? 'default',
        durationMs: durations['lease-duration'],
        renewDeadlineMs: durations['renew-deadline'],
        retryPeriodMs: durations['retry-period'],
      },
      debounceMs: durations.debounce,
      resyncMs: Math.max(1_000, durations.resync),
      watchTimeoutSeconds: Math.max(1, Math.round(durations['watch-timeout'] / 1000)),
      host: listen[1]?.replace(/^\[|\]$/g, '') ?? '0.0.0.0',
      port: Number(listen[2]),
    },
    log,
    metrics,
  ).catch(async (error: unknown) => {
    await store.close()
    throw error
  })
  io.stdout(`controller ${identity} running; probes and metrics on ${controller.url}\n`)
  await interrupted
  await controller.close()
  await store.close()
  return exitCode.ok
}

function cloudflareOf(
  values: {
    'cloudflare-account'?: string
    'cloudflare-namespace'?: string
    'cloudflare-api'?: string
  },
  env: CliIo['env'],
) {
  const account = values['cloudflare-account']
  const namespace = values['cloudflare-namespace']
  if (account === undefined && namespace === undefined) return null
  if (account === undefined || namespace === undefined)
    throw new UsageError('--cloudflare-account and --cloudflare-namespace go together')
  const token = env.CLOUDFLARE_API_TOKEN
  if (!token) throw new UsageError('publishing to Workers KV needs CLOUDFLARE_API_TOKEN')
  return createCloudflareKvPublisher({
    accountId: account,
    namespaceId: namespace,
    apiToken: token,
    ...(values['cloudflare-api'] !== undefined && { baseUrl: values['cloudflare-api'] }),
  })
}
