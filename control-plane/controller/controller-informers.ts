import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node'
import { canonicalJson } from '../../shared/config/canonical-json.ts'
import { type ResilientInformer as Informer, ResilientInformer } from './resilient-informer.ts'
import {
  collectionPath,
  endpointSliceKind,
  kinferenceKinds,
  podKind,
  upstreamPoolKind,
  type WatchedKind,
} from './watched-kinds.ts'

type List = { items: KubernetesObject[]; metadata?: { resourceVersion?: string } }

export interface InformerSetOptions {
  kubeConfig: KubeConfig
  /** Namespaces to watch; empty for all. */
  namespaces: readonly string[]
  watchTimeoutSeconds: number
  staleAfterMs: number
  /** A change that matters (not a status write of ours, not a resync echo). */
  onChange: (kind: string) => void
  onRestart: (kind: string, reason: string, delayMs: number) => void
  random: () => number
  /**
   * Also watch upstream InferencePools (inference.networking.k8s.io/v1), a CRD the
   * cluster may not have: while it answers 404 it is asked again every `retryMs`.
   */
  upstreamPools?: { retryMs: number; onAbsent: (absent: boolean, reason: string) => void }
}

/**
 * The controller's informers: the five Kinference kinds, Pods and EndpointSlices (and, when
 * asked, upstream InferencePools), in each watched namespace (or cluster-wide). Changes are filtered by a fingerprint of what
 * compiling reads, so the controller's own status writes do not trigger reconciles.
 */
export class InformerSet {
  private readonly informers = new Map<string, Informer[]>()
  private readonly fingerprints = new Map<string, string>()
  private readonly options: InformerSetOptions

  constructor(options: InformerSetOptions) {
    this.options = options
    const custom = options.kubeConfig.makeApiClient(CustomObjectsApi)
    const core = options.kubeConfig.makeApiClient(CoreV1Api)
    const discovery = options.kubeConfig.makeApiClient(DiscoveryV1Api)
    const scopes = options.namespaces.length === 0 ? [null] : [...new Set(options.namespaces)]
    const customList =
      (kind: WatchedKind) =>
      (ns: string | null): Promise<List> =>
        (ns === null
          ? custom.listClusterCustomObject({
              group: kind.group,
              version: kind.version,
              plural: kind.plural,
            })
          : custom.listNamespacedCustomObject({
              group: kind.group,
              version: kind.version,
              namespace: ns,
              plural: kind.plural,
            })) as Promise<List>
    const lists: [WatchedKind, (ns: string | null) => Promise<List>][] = [
      ...kinferenceKinds.map(
        (kind) => [kind, customList(kind)] as [WatchedKind, (ns: string | null) => Promise<List>],
      ),
      [
        podKind,
        async (ns) =>
          plain(
            ns === null
              ? await core.listPodForAllNamespaces()
              : await core.listNamespacedPod({ namespace: ns }),
          ),
      ],
      [
        endpointSliceKind,
        async (ns) =>
          plain(
            ns === null
              ? await discovery.listEndpointSliceForAllNamespaces()
              : await discovery.listNamespacedEndpointSlice({ namespace: ns }),
          ),
      ],
    ]
    for (const [kind, list] of lists) {
      this.informers.set(
        kind.kind,
        scopes.map((ns) => this.informerOf(kind, ns, () => list(ns))),
      )
    }
    const upstream = options.upstreamPools
    if (upstream) {
      const list = customList(upstreamPoolKind)
      let absent = false
      this.informers.set(
        upstreamPoolKind.kind,
        scopes.map((ns) =>
          this.informerOf(upstreamPoolKind, ns, () => list(ns), {
            retryMs: upstream.retryMs,
            // One line for the cluster, not one per watched namespace.
            onAbsent: (now, reason) => {
              if (now !== absent) upstream.onAbsent(now, reason)
              absent = now
            },
          }),
        ),
      )
    }
  }

  /** Resolves when every informer has listed once; rejects with the first failure. */
  async start(): Promise<void> {
    await Promise.all([...this.informers.values()].flat().map((informer) => informer.start()))
  }

  objects(kind: string): readonly KubernetesObject[] {
    return (this.informers.get(kind) ?? []).flatMap((informer) => informer.list())
  }

  /** Why the controller is not ready: informers not synced, with their last error. */
  notReady(): string | null {
    for (const [kind, informers] of this.informers)
      for (const informer of informers)
        if (!informer.synced)
          return `${kind} not synced${informer.lastError ? `: ${informer.lastError}` : ''}`
    return null
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].flat().map((informer) => informer.stop()))
  }

  private informerOf(
    kind: WatchedKind,
    namespace: string | null,
    list: () => Promise<List>,
    optional?: { retryMs: number; onAbsent: (absent: boolean, reason: string) => void },
  ) {
    return new ResilientInformer(
      this.options.kubeConfig,
      {
        path: collectionPath(kind, namespace),
        watchTimeoutSeconds: this.options.watchTimeoutSeconds,
        staleAfterMs: this.options.staleAfterMs,
        absentRetryMs: optional?.retryMs ?? null,
      },
      {
        list,
        ...(optional && { onAbsent: optional.onAbsent }),
        random: this.options.random,
        onRestart: (reason, delayMs) => this.options.onRestart(kind.kind, reason, delayMs),
        onChange: (type, object) => this.changed(kind.kind, type, object),
        onRelisted: () => this.options.onChange(kind.kind),
      },
    )
  }

  private changed(kind: string, type: 'add' | 'update' | 'delete', object: KubernetesObject) {
    const key = `${kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`
    if (type === 'delete') {
      this.fingerprints.delete(key)
      this.options.onChange(kind)
      return
    }
    const print = fingerprint(kind, object)
    if (this.fingerprints.get(key) === print) return
    this.fingerprints.set(key, print)
    this.options.onChange(kind)
  }
}

/** What compiling reads of an object: a change elsewhere (status, resourceVersion) is none. */
function fingerprint(kind: string, object: KubernetesObject): string {
  const record = object as KubernetesObject & Record<string, unknown>
  const meta = object.metadata ?? {}
  if (kind === 'Pod')
    return canonicalJson({
      labels: meta.labels ?? {},
      deleting: meta.deletionTimestamp ?? null,
      ip: (record.status as { podIP?: string } | undefined)?.podIP ?? null,
    })
  if (kind === 'EndpointSlice')
    return canonicalJson({ type: record.addressType ?? null, endpoints: record.endpoints ?? [] })
  return canonicalJson({
    generation: meta.generation ?? null,
    spec: record.spec ?? null,
    labels: meta.labels ?? {},
  })
}

/** Typed client-node lists carry Date objects; informers and zod read the wire's JSON. */
function plain(list: unknown): List {
  return JSON.parse(JSON.stringify(list)) as List
}
