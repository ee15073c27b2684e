import type { InferencePool, InferenceWorkerSet } from '../crd/resource.ts'
import { matchesLabels } from '../kube/match-labels.ts'
import {
  targetPortsOf,
  type UpstreamInferencePool,
  upstreamPoolGroup,
} from '../kube/upstream-inference-pool.ts'
import { isReadyEndpoint, type WatchedPod, type Workloads } from '../kube/watched-pod.ts'
import type { PoolEndpoint } from './pool-endpoint.ts'
import type { Indexed, ResourceIndex } from './resource-index.ts'

/** A problem of one pool or worker set with the pods it selects (not a config error). */
export interface EndpointIssue {
  kind: 'InferencePool' | 'InferenceWorkerSet'
  id: string
  /** UpstreamPoolNotFound: its upstreamPoolRef names no upstream pool the controller takes in. */
  reason: 'OverlappingSelector' | 'UpstreamPoolNotFound'
  message: string
}

export interface ResolvedEndpoints {
  /** Ready endpoints by pool id, sorted by name. */
  endpoints: Record<string, PoolEndpoint[]>
  /** Pods each pool or worker set selects (not terminating) and how many are ready, by
   * `Kind/namespace/name`. */
  counts: Record<string, { pods: number; ready: number }>
  issues: EndpointIssue[]
}

/**
 * A pool's endpoints are the ready, non-terminating EndpointSlice endpoints (of a Service
 * over the pool's pods) whose Pod the pool's selector matches, one per pod and port, on
 * the pool's ports (or the selector and target ports of the upstream pool it names). A pod two pools select belongs to the older pool (by creationTimestamp, then
 * id), so a new pool with a broad selector cannot take pods from one already serving.
 */
export function resolveEndpoints(index: ResourceIndex, workloads: Workloads): ResolvedEndpoints {
  const result: ResolvedEndpoints = { endpoints: {}, counts: {}, issues: [] }
  const addresses = readyAddresses(workloads)
  const owner = new Map<string, string>()
  const pools = [...index.InferencePool].sort(
    ([a, first], [b, second]) =>
      createdAt(first).localeCompare(createdAt(second)) || a.localeCompare(b),
  )
  const workerSets = [...index.InferenceWorkerSet.values()]
  for (const [id, pool] of pools) {
    const source = podSourceOf(pool, workloads.upstreamPools ?? [])
    if (typeof source === 'string') {
      result.issues.push({
        kind: 'InferencePool',
        id,
        reason: 'UpstreamPoolNotFound',
        message: source,
      })
      result.endpoints[id] = []
      result.counts[`InferencePool/${id}`] = { pods: 0, ready: 0 }
      continue
    }
    const selected = selectedPods(pool.namespace, source.selector, workloads.pods)
    const claimedElsewhere = selected.filter((pod) => owner.has(podKey(pod)))
    if (claimedElsewhere.length > 0) {
      result.issues.push({
        kind: 'InferencePool',
        id,
        reason: 'OverlappingSelector',
        message: `${describePods(claimedElsewhere)} also selected by InferencePool ${owner.get(podKey(claimedElsewhere[0] as WatchedPod))}; left out of this pool`,
      })
    }
    const own = selected.filter((pod) => !owner.has(podKey(pod)))
    for (const pod of own) owner.set(podKey(pod), id)
    const sets = workerSets.filter(
      (set) =>
        set.namespace === pool.namespace &&
        set.resource.spec.poolRef.name === pool.resource.metadata.name,
    )
    // The worker set of each ready pod (a pod on several target ports counts once).
    const readySets: (string | null)[] = []
    const named = source.ports.length > 1
    const endpoints = own.flatMap((pod) => {
      const address = addresses.get(podKey(pod))
      // An endpoint name is at most 253 characters, as a pod's is: a pod named past 247
      // cannot carry ":port" (Deployments' and StatefulSets' pods are far shorter).
      if (address === undefined || (named && pod.metadata.name.length > 247)) return []
      const workerSet = workerSetOf(sets, pod, result)
      readySets.push(workerSet?.metadata.name ?? null)
      return source.ports.map((port) => endpointOf(pool, pod, address, workerSet, { port, named }))
    })
    endpoints.sort((a, b) => a.name.localeCompare(b.name))
    result.endpoints[id] = endpoints
    result.counts[`InferencePool/${id}`] = { pods: own.length, ready: readySets.length }
    for (const set of sets) countWorkerSet(set, own, readySets, result)
  }
  return result
}

/** RFC 3339 timestamps in UTC sort as text; resources read from files have none. */
const createdAt = (pool: Indexed<InferencePool>) => {
  const value = (pool.resource.metadata as { creationTimestamp?: unknown }).creationTimestamp
  return typeof value === 'string' ? value : ''
}

const podKey = (pod: WatchedPod) => `${pod.metadata.namespace}/${pod.metadata.name}`

function describePods(pods: readonly WatchedPod[]): string {
  const names = pods.slice(0, 5).map((pod) => pod.metadata.name)
  const more = pods.length > 5 ? ` and ${pods.length - 5} more` : ''
  return `pod${pods.length === 1 ? '' : 's'} ${names.join(', ')}${more}`
}

/** Where a pool's pods and ports come from: its own spec, or the upstream pool it names. */
interface PodSource {
  selector: Readonly<Record<string, string>>
  ports: readonly number[]
}

/** The pool's pod source, or why it has none (its upstream pool is not taken in). */
function podSourceOf(
  pool: Indexed<InferencePool>,
  upstreamPools: readonly UpstreamInferencePool[],
): PodSource | string {
  const { spec } = pool.resource
  const ref = spec.upstreamPoolRef
  // The schema gives a pool without upstreamPoolRef both a selector and a targetPort.
  if (!ref)
    return {
      selector: spec.selector?.matchLabels ?? {},
      ports: spec.targetPort === undefined ? [] : [spec.targetPort],
    }
  const upstream = upstreamPools.find(
    (candidate) =>
      candidate.metadata.namespace === pool.namespace && candidate.metadata.name === ref.name,
  )
  if (!upstream)
    return `spec.upstreamPoolRef: no InferencePool.${upstreamPoolGroup} ${pool.namespace}/${ref.name} whose endpointPickerRef names Kinference's Endpoint Picker`
  return { selector: upstream.spec.selector.matchLabels, ports: targetPortsOf(upstream) }
}

function selectedPods(
  namespace: string,
  selector: Readonly<Record<string, string>>,
  pods: readonly WatchedPod[],
): WatchedPod[] {
  return pods.filter(
    (pod) =>
      pod.metadata.namespace === namespace &&
      !pod.metadata.deletionTimestamp &&
      matchesLabels(selector, pod.metadata.labels),
  )
}

/** Pod namespace/name → the address of a ready endpoint that targets it. */
function readyAddresses(workloads: Workloads): Map<string, { address: string; ipv6: boolean }> {
  const ready = new Map<string, { address: string; ipv6: boolean }>()
  for (const slice of workloads.endpointSlices) {
    if (slice.addressType === 'FQDN') continue
    for (const endpoint of slice.endpoints ?? []) {
      const target = endpoint.targetRef
      if (!target || (target.kind !== undefined && target.kind !== 'Pod')) continue
      if (!isReadyEndpoint(endpoint.conditions)) continue
      const key = `${target.namespace ?? slice.metadata.namespace}/${target.name}`
      const address = endpoint.addresses[0]
      if (address !== undefined && !ready.has(key))
        ready.set(key, { address, ipv6: slice.addressType === 'IPv6' })
    }
  }
  return ready
}

/** The worker set a pod is counted in (the first by name of those selecting it), if any. */
function workerSetOf(
  sets: readonly Indexed<InferenceWorkerSet>[],
  pod: WatchedPod,
  result: ResolvedEndpoints,
): InferenceWorkerSet | null {
  const matching = sets
    .filter((set) => matchesLabels(set.resource.spec.selector.matchLabels, pod.metadata.labels))
    .map((set) => set.resource)
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
  for (const { metadata } of matching.slice(1)) {
    const later = metadata.name
    const id = `${pod.metadata.namespace}/${later}`
    if (result.issues.some((issue) => issue.id === id && issue.kind === 'InferenceWorkerSet'))
      continue
    result.issues.push({
      kind: 'InferenceWorkerSet',
      id,
      reason: 'OverlappingSelector',
      message: `pod ${pod.metadata.name} is also selected by InferenceWorkerSet ${matching[0]?.metadata.name}, which it is counted in`,
    })
  }
  return matching[0] ?? null
}

function countWorkerSet(
  set: Indexed<InferenceWorkerSet>,
  pods: readonly WatchedPod[],
  readySets: readonly (string | null)[],
  result: ResolvedEndpoints,
) {
  const name = set.resource.metadata.name
  result.counts[`InferenceWorkerSet/${set.namespace}/${name}`] = {
    pods: pods.filter((pod) =>
      matchesLabels(set.resource.spec.selector.matchLabels, pod.metadata.labels),
    ).length,
    ready: readySets.filter((workerSet) => workerSet === name).length,
  }
}

/**
 * One endpoint of a pod on one of the pool's ports. A pod serving on several ports (an
 * upstream pool's targetPorts) is one endpoint per port, named `pod:port` (no Kubernetes
 * name holds ":", so none is mistaken for a pod's own); on one port it is the pod's name,
 * as the KV index and the KV-event topic know it. Several ports mean several servers
 * behind one pod address, so the pod's one KV-event socket is not read for any of them.
 */
function endpointOf(
  pool: Indexed<InferencePool>,
  pod: WatchedPod,
  at: { address: string; ipv6: boolean },
  workerSet: InferenceWorkerSet | null,
  on: { port: number; named: boolean },
): PoolEndpoint {
  const { spec } = pool.resource
  const host = at.ipv6 ? `[${at.address}]` : at.address
  const metricsPort = spec.metrics.port ?? on.port
  const dataParallelSize = workerSet?.spec.dataParallelSize ?? 1
  const kvEvents = on.named ? undefined : spec.kvEvents
  return {
    name: on.named ? `${pod.metadata.name}:${on.port}` : pod.metadata.name,
    namespace: pod.metadata.namespace,
    address: at.address,
    workerSet: workerSet?.metadata.name ?? null,
    http: `http://${host}:${on.port}`,
    metrics: `http://${host}:${metricsPort}${spec.metrics.path}`,
    events: kvEvents ? `tcp://${host}:${kvEvents.port}` : null,
    replay: kvEvents?.replayPort ? `tcp://${host}:${kvEvents.replayPort}` : null,
    ...(dataParallelSize > 1 && { dataParallelSize }),
    labels: { ...pod.metadata.labels },
  }
}
