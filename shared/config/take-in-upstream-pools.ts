import { apiVersion, dnsLabelPattern } from '../crd/api-group.ts'
import type { InferencePoolSpec } from '../crd/inference-pool.ts'
import { namesEndpointPicker, UpstreamInferencePool } from '../kube/upstream-inference-pool.ts'
import { anyModel } from '../routing/pool-router.ts'
import type { LiveDocument } from './compile-live-config.ts'

/** How an upstream pool whose endpointPickerRef names our Endpoint Picker is served. */
export type UpstreamPoolOutcome =
  /** As the Kinference InferencePool `poolId` (namespace/name) that names it. */
  | { served: 'referred'; poolId: string; key: string }
  /** As a pool of defaults under its own namespace/name. */
  | { served: 'default'; poolId: string; key: string }
  /** Not at all: `message` says why (its id is taken, or cannot be one). */
  | { served: 'refused'; message: string }

export interface UpstreamIntake {
  /** The upstream pools that name our Endpoint Picker (resolve-endpoints reads these). */
  taken: UpstreamInferencePool[]
  /** By the upstream pool's namespace/name; pools naming another picker are absent. */
  outcomes: Map<string, UpstreamPoolOutcome>
  /** Kinference pools of defaults standing for the upstream pools none refers to. */
  documents: LiveDocument[]
}

/**
 * The spec of the pool that stands for an upstream pool no Kinference pool refers to:
 * GIE's own default scorers (queue, KV-cache use, approximate prefix over the prompt's
 * text), any model a request names (anyModel), counted with the built-in qwen3 tokenizer and a
 * context limit the router never refuses a prompt at (the pods enforce theirs), and a
 * generic GPU for TTFT estimates. Write a Kinference InferencePool with upstreamPoolRef to
 * say what the pods really serve.
 */
export function defaultUpstreamPoolSpec(name: string): Record<string, unknown> {
  return {
    upstreamPoolRef: { name },
    models: [{ name: anyModel, tokenizer: 'qwen3', maxContextTokens: 10_000_000 }],
    gpuProfile: 'generic',
    routing: { strategy: 'gie-default' },
  } satisfies Partial<Record<keyof InferencePoolSpec, unknown>>
}

/**
 * Which upstream InferencePools (`inference.networking.k8s.io/v1`) the controller takes
 * in, and as what. Ours are those whose endpointPickerRef names the Service `service` of
 * their namespace. One a Kinference InferencePool names in `spec.upstreamPoolRef` is
 * served as that pool (the oldest, when several do; the others then select no pods);
 * another gets a pool of defaults under its own namespace/name, unless a Kinference pool
 * already has that id, or its name (a DNS subdomain) cannot be one.
 */
export function takeInUpstreamPools(options: {
  /** Upstream pools as the cluster holds them (unparsable ones are skipped). */
  upstream: readonly unknown[]
  /** The Kinference InferencePools as compiled: their keys `InferencePool/ns/name`. */
  pools: readonly LiveDocument[]
  /** The Endpoint Picker Service's name; null: none is ours. */
  service: string | null
}): UpstreamIntake {
  const intake: UpstreamIntake = { taken: [], outcomes: new Map(), documents: [] }
  if (options.service === null) return intake
  const referrers = referrersOf(options.pools)
  const ids = new Set(options.pools.map((pool) => pool.key))
  for (const value of options.upstream) {
    const parsed = UpstreamInferencePool.safeParse(value)
    if (!parsed.success || !namesEndpointPicker(parsed.data, options.service)) continue
    const pool = parsed.data
    const { namespace, name } = pool.metadata
    const id = `${namespace}/${name}`
    intake.taken.push(pool)
    const referrer = referrers.get(id)
    if (referrer) {
      const poolId = referrer.key.slice('InferencePool/'.length)
      intake.outcomes.set(id, { served: 'referred', poolId, key: referrer.key })
    } else if (!dnsLabelPattern.test(name) || name.length > 63) {
      intake.outcomes.set(id, {
        served: 'refused',
        message: `no Kinference InferencePool names it in spec.upstreamPoolRef, and its name is not a DNS-1123 label, so it cannot be a pool of defaults`,
      })
    } else if (ids.has(`InferencePool/${id}`)) {
      intake.outcomes.set(id, {
        served: 'refused',
        message: `InferencePool.kinference.dev ${id} has its name and does not name it in spec.upstreamPoolRef; set upstreamPoolRef there, or rename one of them`,
      })
    } else {
      const key = `InferencePool/${id}`
      intake.outcomes.set(id, { served: 'default', poolId: id, key })
      intake.documents.push({ key, value: defaultDocument(pool) })
    }
  }
  return intake
}

/** The Kinference pool of defaults for `pool`: its identity and creation time, for overlaps. */
function defaultDocument(pool: UpstreamInferencePool): Record<string, unknown> {
  const { name, namespace, generation, creationTimestamp } = pool.metadata
  return {
    apiVersion,
    kind: 'InferencePool',
    metadata: {
      name,
      namespace,
      ...(generation !== undefined && { generation }),
      ...(creationTimestamp !== undefined && { creationTimestamp }),
    },
    spec: defaultUpstreamPoolSpec(name),
  }
}

/**
 * Upstream pool id → the Kinference pool naming it in spec.upstreamPoolRef, the oldest
 * (creationTimestamp, then key) when several do. Read from the documents as they are, so
 * a pool that does not validate still refers (its status then says why it is not served).
 */
function referrersOf(pools: readonly LiveDocument[]): Map<string, LiveDocument> {
  const referrers = new Map<string, { document: LiveDocument; created: string }>()
  for (const document of pools) {
    const value = document.value as {
      metadata?: { namespace?: unknown; creationTimestamp?: unknown }
      spec?: { upstreamPoolRef?: { name?: unknown } }
    } | null
    const ref = value?.spec?.upstreamPoolRef?.name
    if (typeof ref !== 'string') continue
    const namespace = document.key.split('/')[1] ?? ''
    const created =
      typeof value?.metadata?.creationTimestamp === 'string' ? value.metadata.creationTimestamp : ''
    const id = `${namespace}/${ref}`
    const before = referrers.get(id)
    if (
      !before ||
      created.localeCompare(before.created) < 0 ||
      (created === before.created && document.key < before.document.key)
    )
      referrers.set(id, { document, created })
  }
  return new Map([...referrers].map(([id, { document }]) => [id, document]))
}
