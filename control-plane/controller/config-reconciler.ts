import type { KubernetesObject } from '@kubernetes/client-node'
import { canonicalJson } from '../../shared/config/canonical-json.ts'
import {
  compileLiveConfig,
  type LiveDocument,
  type Verdict,
} from '../../shared/config/compile-live-config.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { ResolvedEndpoints } from '../../shared/config/resolve-endpoints.ts'
import { takeInUpstreamPools } from '../../shared/config/take-in-upstream-pools.ts'
import type { KinferenceResource } from '../../shared/crd/resource.ts'
import { WatchedEndpointSlice, WatchedPod, type Workloads } from '../../shared/kube/watched-pod.ts'
import type { Log } from '../../shared/logging/log.ts'
import type { ControllerMetrics } from './controller-metrics.ts'
import {
  desiredStatus,
  type PublishState,
  type ResourceFacts,
  statusDiffers,
} from './desired-status.ts'
import { seededResources } from './seeded-resources.ts'
import type { StatusWrite } from './status-writer.ts'
import { writeUpstreamStatuses } from './upstream-pool-status.ts'
import { kinferenceKinds, upstreamPoolKind, type WatchedKind } from './watched-kinds.ts'

/** Where snapshots go live: Redis first (it numbers versions), then Workers KV. */
export interface SnapshotSink {
  publish(snapshot: ConfigSnapshot): Promise<{ version: number; changed: boolean }>
  /** The live snapshot, so a new leader carries on from it; null when there is none. */
  live(): Promise<{ version: number; snapshot: ConfigSnapshot } | null>
}

export interface ReconcilerDeps {
  objects: (kind: string) => readonly KubernetesObject[]
  sink: SnapshotSink
  writeStatus: (
    kind: WatchedKind,
    object: KubernetesObject,
    compute: (existing: unknown) => Record<string, unknown> | null,
  ) => Promise<StatusWrite>
  isLeader: () => boolean
  metrics: ControllerMetrics
  log: Log
  nowMs: () => number
  /** Asks for another reconcile later (publishing failed). */
  retryLater: () => void
  /** Records an Event on a resource whose acceptance changed (best effort). */
  emitEvent: (object: KubernetesObject, event: AcceptanceEvent) => Promise<void>
  /**
   * The Endpoint Picker Service whose upstream InferencePools become pools; null: none.
   * Its objects come as objects(upstreamPoolKind.kind).
   */
  eppService?: string | null
  /** Writes an upstream pool's status (read first: other controllers share it). */
  writeUpstreamStatus?: (
    object: KubernetesObject,
    compute: (existing: unknown) => Record<string, unknown> | null,
  ) => Promise<StatusWrite>
}

export interface AcceptanceEvent {
  type: 'Normal' | 'Warning'
  reason: 'Accepted' | 'Rejected'
  message: string
}

/** A watched Kinference object, with whatever status it has. */
type Watched = KubernetesObject & { status?: unknown }

/**
 * One reconcile: compile what the caches hold (failing static per resource), publish the
 * snapshot when its hash is new, and bring every resource's status up to date. Only the
 * leader publishes and writes; every replica compiles, so a new leader starts warm.
 */
export class ConfigReconciler {
  private readonly deps: ReconcilerDeps
  private lastGood = new Map<string, KinferenceResource>()
  private publishState: PublishState = { state: 'pending' }
  /** Per resource: the content it went live with, and in which snapshot version. */
  private readonly liveSince = new Map<string, { content: string; version: number }>()
  private seeded = false

  constructor(deps: ReconcilerDeps) {
    this.deps = deps
  }

  get state(): PublishState {
    return this.publishState
  }

  async reconcile(): Promise<void> {
    const started = performance.now()
    const { metrics } = this.deps
    try {
      const seededNow = this.deps.isLeader() && !this.seeded ? await this.seed() : this.seeded
      const objects = new Map(
        kinferenceKinds.map((kind) => [kind.kind, this.deps.objects(kind.kind) as Watched[]]),
      )
      const documents = [...objects].flatMap(([kind, list]) =>
        list.map((object) => documentOf(kind, object)),
      )
      const upstream = takeInUpstreamPools({
        upstream: this.deps.objects(upstreamPoolKind.kind),
        pools: documents.filter((document) => document.key.startsWith('InferencePool/')),
        service: this.deps.eppService ?? null,
      })
      const live = await compileLiveConfig({
        documents: [...documents, ...upstream.documents],
        lastGood: this.lastGood,
        workloads: { ...this.workloads(), upstreamPools: upstream.taken },
        defaultNamespace: 'default',
      })
      this.lastGood = live.carried
      if (!live.result.ok) {
        // Nothing can be published until a resource changes: the reconcile stops here.
        this.deps.log(
          `the accepted resources do not compile: ${live.result.issues.map((i) => i.message).join('; ')}`,
          { level: 'error', issues: live.result.issues.length },
        )
        metrics.reconciles.labels({ result: 'compile-failed' }).inc()
        return
      }
      if (!this.deps.isLeader()) {
        metrics.reconciles.labels({ result: 'follower' }).inc()
        return
      }
      if (seededNow) await this.publish(live.result.snapshot)
      await this.writeStatuses(objects, live.verdicts, live.result.resolved)
      await writeUpstreamStatuses({
        intake: upstream,
        verdicts: live.verdicts,
        carried: live.carried,
        resolved: live.result.resolved,
        metrics,
        log: this.deps.log,
        objects: this.deps.objects(upstreamPoolKind.kind),
        service: this.deps.eppService ?? null,
        nowIso: new Date(this.deps.nowMs()).toISOString(),
        write: (object, compute) =>
          this.deps.writeUpstreamStatus?.(object, compute) ?? Promise.resolve('unchanged'),
      })
      for (const kind of kinferenceKinds) {
        const rejected = (objects.get(kind.kind) ?? []).filter(
          (o) => live.verdicts.get(documentOf(kind.kind, o).key)?.accepted === false,
        )
        metrics.rejected.labels({ kind: kind.kind }).set(rejected.length)
      }
      metrics.reconciles.labels({ result: 'ok' }).inc()
    } catch (error) {
      metrics.reconciles.labels({ result: 'error' }).inc()
      throw error
    } finally {
      metrics.reconcileSeconds.labels({}).observe((performance.now() - started) / 1000)
    }
  }

  /**
   * A new leader (or a restarted one) keeps what is live as the last accepted versions.
   * Until it has read what is live it publishes nothing: it could drop what it cannot see.
   */
  private async seed(): Promise<boolean> {
    let live: Awaited<ReturnType<SnapshotSink['live']>>
    try {
      live = await this.deps.sink.live()
    } catch (error) {
      this.failPublish(`reading the live snapshot: ${(error as Error).message}`)
      return false
    }
    this.seeded = true
    if (!live) return true
    this.publishState = { state: 'published', version: live.version, hash: live.snapshot.hash }
    this.markLive(seededResources(live.snapshot), live.version)
    this.deps.metrics.snapshotVersion.labels({}).set(live.version)
    for (const [key, resource] of seededResources(live.snapshot))
      if (!this.lastGood.has(key)) this.lastGood.set(key, resource)
    return true
  }

  private markLive(resources: ReadonlyMap<string, KinferenceResource>, version: number) {
    for (const [key, resource] of resources) {
      const content = canonicalJson(resource.spec)
      if (this.liveSince.get(key)?.content !== content)
        this.liveSince.set(key, { content, version })
    }
  }

  private failPublish(message: string) {
    const version = this.publishState.state === 'pending' ? null : this.publishState.version
    this.publishState = { state: 'failed', message, version }
    this.deps.log(message, { level: 'error' })
    this.deps.retryLater()
  }

  private workloads(): Workloads {
    const parse = <T>(
      list: readonly KubernetesObject[],
      schema: { safeParse: (v: unknown) => { success: boolean; data?: T } },
    ) =>
      list.flatMap((object) => {
        const parsed = schema.safeParse(object)
        return parsed.success ? [parsed.data as T] : []
      })
    return {
      pods: parse<WatchedPod>(this.deps.objects('Pod'), WatchedPod),
      endpointSlices: parse<WatchedEndpointSlice>(
        this.deps.objects('EndpointSlice'),
        WatchedEndpointSlice,
      ),
    }
  }

  private async publish(snapshot: ConfigSnapshot) {
    if (this.publishState.state === 'published' && this.publishState.hash === snapshot.hash) return
    try {
      const { version } = await this.deps.sink.publish(snapshot)
      this.publishState = { state: 'published', version, hash: snapshot.hash }
      this.markLive(this.lastGood, version)
      this.deps.metrics.snapshotVersion.labels({}).set(version)
      this.deps.log(`snapshot version ${version} (${snapshot.hash}) published`, {
        level: 'info',
        version,
        hash: snapshot.hash,
      })
    } catch (error) {
      const message = (error as Error).message
      const version =
        this.publishState.state === 'published'
          ? this.publishState.version
          : this.publishState.state === 'failed'
            ? this.publishState.version
            : null
      this.publishState = { state: 'failed', message: `publishing failed: ${message}`, version }
      this.deps.log(`publishing snapshot ${snapshot.hash} failed: ${message}`, {
        level: 'error',
        hash: snapshot.hash,
        error: message,
      })
      this.deps.retryLater()
    }
  }

  private async writeStatuses(
    objects: Map<string, Watched[]>,
    verdicts: Map<string, Verdict>,
    resolved: ResolvedEndpoints,
  ) {
    const nowIso = new Date(this.deps.nowMs()).toISOString()
    const writes = kinferenceKinds.flatMap((kind) =>
      (objects.get(kind.kind) ?? []).map(async (object) => {
        const { key } = documentOf(kind.kind, object)
        const facts = this.factsOf(kind.kind, object, verdicts.get(key), resolved)
        const result = await this.deps
          .writeStatus(kind, object, (existing) => {
            const desired = desiredStatus(facts, existing, nowIso)
            return statusDiffers(existing, desired) ? desired : null
          })
          .catch((error: unknown) => {
            const message = (error as Error).message
            this.deps.log(`status of ${key}: ${message}`, {
              level: 'warn',
              ...identityOf(kind.kind, object),
              error: message,
            })
            return 'failed' as const
          })
        this.deps.metrics.statusWrites.labels({ kind: kind.kind, result }).inc()
        if (result === 'written') await this.announce(object, facts)
      }),
    )
    await Promise.all(writes)
  }

  /** An Event when a resource's acceptance flips, so `kubectl describe` and event feeds show it. */
  private async announce(object: Watched, facts: ResourceFacts) {
    const before = acceptedStatusOf(object.status)
    const verdict = facts.verdict
    if (!verdict || before === (verdict.accepted ? 'True' : 'False')) return
    const identity = identityOf(facts.kind, object)
    this.deps.log(
      verdict.accepted
        ? `${facts.kind} ${identity.namespace}/${identity.name} accepted (generation ${facts.generation})`
        : `${facts.kind} ${identity.namespace}/${identity.name} refused: ${verdict.problems.join('; ').slice(0, 1_000)}`,
      { level: verdict.accepted ? 'info' : 'warn', ...identity, generation: facts.generation },
    )
    const event: AcceptanceEvent = verdict.accepted
      ? { type: 'Normal', reason: 'Accepted', message: `generation ${facts.generation} accepted` }
      : {
          type: 'Warning',
          reason: 'Rejected',
          message: verdict.problems.join('; ').slice(0, 1_000),
        }
    await this.deps.emitEvent(object, event).catch((error: unknown) => {
      const message = (error as Error).message
      this.deps.log(`event on ${identity.namespace}/${identity.name}: ${message}`, {
        level: 'warn',
        ...identity,
        error: message,
      })
    })
  }

  private factsOf(
    kind: string,
    object: Watched,
    verdict: ResourceFacts['verdict'],
    resolved: ResolvedEndpoints,
  ): ResourceFacts {
    const { key } = documentOf(kind, object)
    const id = key.slice(kind.length + 1)
    const carried = this.lastGood.get(key)
    const generation = object.metadata?.generation ?? 0
    const counted = kind === 'InferencePool' || kind === 'InferenceWorkerSet'
    const problem = resolved.issues.find((issue) => issue.kind === kind && issue.id === id)
    return {
      kind,
      generation,
      verdict,
      carriedGeneration:
        verdict?.carried === 'current' ? generation : (carried?.metadata.generation ?? null),
      ...(counted && { counts: resolved.counts[key] ?? { pods: 0, ready: 0 } }),
      ...(problem && { selectorProblem: { reason: problem.reason, message: problem.message } }),
      publish:
        this.publishState.state === 'published'
          ? {
              ...this.publishState,
              version: this.liveSince.get(key)?.version ?? this.publishState.version,
            }
          : this.publishState,
    }
  }
}

function acceptedStatusOf(status: unknown): string | null {
  const conditions = (status as { conditions?: { type?: string; status?: string }[] } | null)
    ?.conditions
  return Array.isArray(conditions)
    ? (conditions.find((c) => c.type === 'Accepted')?.status ?? null)
    : null
}

/** A resource's identity as log fields (the namespace as compiled: default when unset). */
function identityOf(kind: string, object: KubernetesObject) {
  return {
    kind,
    namespace: object.metadata?.namespace ?? 'default',
    name: object.metadata?.name ?? '',
  }
}

/** The object as compiled: its spec and identity, without what the server and we add. */
function documentOf(kind: string, object: Watched): LiveDocument {
  const { status: _status, ...rest } = object
  const metadata = { ...(object.metadata ?? {}) } as Record<string, unknown>
  delete metadata.managedFields
  const key = `${kind}/${object.metadata?.namespace ?? 'default'}/${object.metadata?.name ?? ''}`
  return { key, value: { ...rest, metadata } }
}
