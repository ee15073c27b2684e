import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
} from '@kubernetes/client-node'
import { z } from 'zod'
import { parseOptions } from '../../shared/config/parse-options.ts'
import { dnsLabelPattern } from '../../shared/crd/api-group.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { Log } from '../../shared/logging/log.ts'
import { ConfigReconciler, type SnapshotSink } from './config-reconciler.ts'
import { InformerSet } from './controller-informers.ts'
import { createControllerMetrics } from './controller-metrics.ts'
import { startControllerServer } from './controller-server.ts'
import { createDebouncedRunner } from './debounced-runner.ts'
import { emitAcceptanceEvent } from './emit-acceptance-event.ts'
import { LeaseElector } from './lease-elector.ts'
import { describeError } from './resilient-informer.ts'
import { writeStatus } from './status-writer.ts'
import { upstreamPoolKind } from './watched-kinds.ts'

export const ControllerOptions = z.strictObject({
  /** Namespaces watched; empty for all. */
  namespaces: z.array(z.string().min(1).max(63)).default([]),
  identity: z.string().min(1),
  lease: z.strictObject({
    name: z.string().min(1).default('kinference-controller'),
    namespace: z.string().min(1),
    durationMs: z.int().min(1_000).default(15_000),
    renewDeadlineMs: z.int().min(500).default(10_000),
    retryPeriodMs: z.int().min(100).default(2_000),
  }),
  /** Quiet time after a change before compiling, and the longest a change waits. */
  debounceMs: z.int().min(0).default(100),
  maxDebounceMs: z.int().min(0).default(1_000),
  /** A full reconcile this often even when nothing changed (status drift, missed events). */
  resyncMs: z.int().min(1_000).default(300_000),
  watchTimeoutSeconds: z.int().min(1).default(290),
  staleWatchMs: z.int().min(1_000).default(360_000),
  publishRetryMs: z.int().min(10).default(1_000),
  publishRetryMaxMs: z.int().min(10).default(30_000),
  /**
   * The Endpoint Picker's Service (the scorer's): upstream InferencePools
   * (inference.networking.k8s.io/v1) whose endpointPickerRef names it in their namespace
   * become pools of the snapshot. Null: they are not watched.
   */
  eppService: z
    .string()
    .regex(dnsLabelPattern, 'must be a Service name (a DNS-1123 label)')
    .max(63)
    .nullable()
    .default(null),
  /** How often a cluster without the upstream InferencePool CRD is asked again. */
  upstreamRetryMs: z.int().min(10).default(60_000),
  host: z.string().default('0.0.0.0'),
  port: z.int().min(0).max(65_535).default(8081),
})
export type ControllerOptionsInput = z.input<typeof ControllerOptions>

export interface RunningController {
  url: string
  isLeader: () => boolean
  /** Resolves once no reconcile is under way or pending. */
  idle: () => Promise<void>
  metrics: ReturnType<typeof createControllerMetrics>
  close: () => Promise<void>
}

/**
 * The controller: informers over the cluster, a debounced reconcile that compiles and
 * publishes, status on every resource, leader election, and its probe/metrics server.
 * Startup fails with one line when the API server cannot be reached or denies a list.
 */
export async function startController(
  kubeConfig: KubeConfig,
  sink: SnapshotSink,
  input: ControllerOptionsInput,
  log: Log,
  metrics = createControllerMetrics(() => Date.now() / 1000),
): Promise<RunningController> {
  const options = parseOptions(ControllerOptions, input, 'controller')
  const custom = kubeConfig.makeApiClient(CustomObjectsApi)
  const core = kubeConfig.makeApiClient(CoreV1Api)
  let retryMs = options.publishRetryMs
  let retryTimer: ReturnType<typeof setTimeout> | null = null
  let closing = false
  const lease = {
    kind: 'Lease',
    namespace: options.lease.namespace,
    name: options.lease.name,
    identity: options.identity,
  }
  const elector = new LeaseElector(
    kubeConfig.makeApiClient(CoordinationV1Api),
    {
      name: options.lease.name,
      namespace: options.lease.namespace,
      identity: options.identity,
      leaseDurationMs: options.lease.durationMs,
      renewDeadlineMs: options.lease.renewDeadlineMs,
      retryPeriodMs: options.lease.retryPeriodMs,
    },
    {
      nowMs: Date.now,
      // The elector tries again every retry period: a failed try is recoverable.
      onError: (message) => log(message, { level: 'warn', ...lease }),
      onStartedLeading: () => {
        log(`${options.identity} is the leader`, { level: 'info', ...lease })
        metrics.leader.labels({}).set(1)
        runner.trigger()
      },
      onStoppedLeading: () => {
        // Stepping down on close is the plan; otherwise renewing failed for too long.
        log(`${options.identity} is no longer the leader`, {
          level: closing ? 'info' : 'warn',
          ...lease,
        })
        metrics.leader.labels({}).set(0)
      },
    },
  )
  const informers = new InformerSet({
    kubeConfig,
    namespaces: options.namespaces,
    watchTimeoutSeconds: options.watchTimeoutSeconds,
    staleAfterMs: options.staleWatchMs,
    random: Math.random,
    onChange: (kind) => {
      metrics.changes.labels({ kind }).inc()
      runner.trigger()
    },
    onRestart: (kind, reason, delayMs) => {
      metrics.watchRestarts.labels({ kind }).inc()
      log(`${kind} watch stopped (${reason}); restarting in ${delayMs} ms`, {
        level: 'warn',
        kind,
        reason,
        delay_ms: delayMs,
      })
    },
    ...(options.eppService !== null && {
      upstreamPools: {
        retryMs: options.upstreamRetryMs,
        onAbsent: (absent, reason) =>
          absent
            ? log(
                `${upstreamPoolKind.kind} is not served (${reason}): no upstream pools until its CRD is applied; asking again every ${options.upstreamRetryMs} ms`,
                { level: 'warn', kind: upstreamPoolKind.kind, reason },
              )
            : log(`${upstreamPoolKind.kind} is served now; watching it`, {
                level: 'info',
                kind: upstreamPoolKind.kind,
              }),
      },
    }),
  })
  const reconciler = new ConfigReconciler({
    objects: (kind) => informers.objects(kind),
    sink,
    isLeader: () => elector.isLeader,
    metrics,
    log,
    nowMs: Date.now,
    writeStatus: (kind, object, compute) => writeStatus({ api: custom, kind, object, compute }),
    emitEvent: (object, event) => emitAcceptanceEvent(core, object, event, options.identity),
    eppService: options.eppService,
    writeUpstreamStatus: (object, compute) =>
      writeStatus({ api: custom, kind: upstreamPoolKind, object, compute, readFirst: true }),
    retryLater: () => {
      if (retryTimer || closing) return
      retryTimer = setTimeout(() => {
        retryTimer = null
        runner.trigger()
      }, retryMs)
      retryMs = Math.min(options.publishRetryMaxMs, retryMs * 2)
    },
  })
  const runner = createDebouncedRunner({
    delayMs: options.debounceMs,
    maxDelayMs: options.maxDebounceMs,
    run: async () => {
      await reconciler.reconcile()
      if (reconciler.state.state === 'published') retryMs = options.publishRetryMs
    },
    // The reconcile stopped part way; the next change or resync tries again from scratch.
    onError: (error) =>
      log(`reconcile failed: ${describeError(error)}`, {
        level: 'error',
        error: describeError(error),
      }),
  })
  try {
    await informers.start()
  } catch (error) {
    await informers.stop()
    throw startupError(kubeConfig, error)
  }
  const server = await startControllerServer(
    { notReady: () => informers.notReady(), metrics: () => metrics.registry.render() },
    options.host,
    options.port,
  )
  log(`${options.identity} started; probes and metrics at ${server.url}`, {
    level: 'info',
    identity: options.identity,
    url: server.url,
  })
  elector.start()
  const resync = setInterval(() => runner.trigger(), options.resyncMs)
  runner.trigger()
  return {
    url: server.url,
    isLeader: () => elector.isLeader,
    idle: () => runner.idle(),
    metrics,
    /**
     * A graceful stop (SIGTERM): the reconcile under way finishes, publish and status
     * writes included, while this replica still leads; nothing new starts; then the
     * Lease is released, so another replica leads at once instead of after its duration.
     */
    async close() {
      closing = true
      clearInterval(resync)
      if (retryTimer) clearTimeout(retryTimer)
      await runner.close()
      await elector.stop()
      await informers.stop()
      await server.close()
    },
  }
}

/** The first list failed: say which API server, and what it answered, in one line. */
function startupError(kubeConfig: KubeConfig, error: unknown): KinfError {
  const server = kubeConfig.getCurrentCluster()?.server ?? 'the API server'
  const status =
    (error as { code?: number; statusCode?: number }).code ??
    (error as { statusCode?: number }).statusCode
  const detail = describeError(error)
  if (status === 401)
    return new KinfError('unauthorized', `${server} refused the credentials (${detail})`)
  if (status === 403)
    return new KinfError(
      'forbidden',
      `${server} denied a list the controller needs (${detail}); see infra/k8s/rbac/`,
    )
  if (status === 404)
    return new KinfError(
      'not_found',
      `${server} does not serve a watched kind (${detail}); are the CRDs in infra/k8s/crds/ applied?`,
    )
  return new KinfError(
    'upstream_unavailable',
    `cannot reach the Kubernetes API at ${server}: ${detail}`,
  )
}
