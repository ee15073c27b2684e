import { z } from 'zod'
import { ConfigSnapshot, snapshotSchemaOf } from '../../shared/config/config-snapshot.ts'
import { InferencePoolSpec, inferencePoolSpecSchema } from '../../shared/crd/inference-pool.ts'
import { builtinPlugins, type Plugins } from '../../shared/plugins.ts'
import { defaultKeyPrefix } from '../../shared/protocol/key-prefix.ts'
import { NodeServerLimits } from '../http/node-server-limits.ts'
import { EppConfig } from './epp/epp-config.ts'
import { TokenizationOptions } from './serving/tokenization-options.ts'

/**
 * A pod the scorer routes to: its OpenAI server, its /metrics and its KV-event sockets. A
 * pod running several data-parallel engines is one of these per engine (rank), named
 * `<pod>/dp<rank>` (data-parallel-endpoints.ts).
 */
export const ScorerPod = z.strictObject({
  /** A pod's name (253 at most in Kubernetes), with /dp<rank> for a data-parallel engine. */
  name: z.string().min(1).max(258),
  /** The pool's id (namespace/name), or its name when that names one pool. */
  pool: z.string().min(1),
  http: z.url({ protocol: /^https?$/ }),
  /** The pod's /metrics; null: the pool's metrics path on the http address. */
  metrics: z
    .url({ protocol: /^https?$/ })
    .nullable()
    .default(null),
  /** ZMQ PUB endpoint to connect a SUB socket to; null when the pod publishes no events. */
  events: z
    .string()
    .regex(/^tcp:\/\/.+:\d+$/)
    .nullable(),
  replay: z
    .string()
    .regex(/^tcp:\/\/.+:\d+$/)
    .nullable(),
  /**
   * The engine of a data-parallel pod this endpoint is (vLLM's X-data-parallel-rank, and
   * the `engine` label of its metrics); null for a pod with one engine.
   */
  dataParallelRank: z.int().min(0).max(63).nullable().default(null),
})
export type ScorerPod = z.infer<typeof ScorerPod>
export type ScorerPodInput = z.input<typeof ScorerPod>

/** A pool given by hand, its spec's routing one of `spec`'s strategies. */
function scorerPoolOf(spec: typeof InferencePoolSpec) {
  return z.strictObject({
    name: z.string().min(1),
    /**
     * A snapshot's pool has one; without one (a pool given by hand) the pool is known by its
     * name alone and answers for a pool of that name in any namespace.
     */
    namespace: z.string().min(1).nullable().default(null),
    spec,
  })
}

export const ScorerPool = scorerPoolOf(InferencePoolSpec)
export type ScorerPool = z.infer<typeof ScorerPool>
export type ScorerPoolInput = z.input<typeof ScorerPool>

/** GatewayBackend name → the pool (id, or a name that names one pool) and model it targets. */
export const ScorerBackends = z.record(
  z.string(),
  z.strictObject({ pool: z.string(), model: z.string() }),
)
export type ScorerBackends = z.infer<typeof ScorerBackends>

/**
 * The scorer's whole configuration, parsed once at start and passed down; its snapshot and
 * pools with the schemas of the plugins the scorer runs (scorerConfigSchema).
 */
function scorerConfigOf(snapshot: typeof ConfigSnapshot, pool: typeof ScorerPool) {
  return z.strictObject({
    host: z.string().default('127.0.0.1'),
    port: z.int().min(0).max(65_535),
    /**
     * /metrics and /health, on a listener of their own: the API port is the edge's (through
     * the ingress path), the metrics port the scrapers' and the probes'. 0: a free port;
     * null: neither is served.
     */
    metricsPort: z.int().min(0).max(65_535).nullable().default(0),
    metricsHost: z.string().default('127.0.0.1'),
    /** HMAC secrets shared with the edge; several, so one can be rotated. */
    signingSecrets: z.array(z.string().min(16, 'a signing secret needs at least 16 characters')),
    /** Accept requests without an edge signature: for local trials only, never in a cluster. */
    allowUnsigned: z.boolean().default(false),
    /** Bearer token of /admin; the admin API is off without one. */
    adminToken: z.string().min(16).nullable().default(null),
    /** Shared index in Redis when set (scorer replicas); in memory otherwise. */
    redisUrl: z.string().nullable().default(null),
    redisPrefix: z.string().default(defaultKeyPrefix),
    /**
     * The pools, backends and pods (its endpoints) to start with, verified by the caller.
     * Without one, `pools` and `backends` say; applySnapshot replaces them either way.
     */
    snapshot: snapshot.nullable().default(null),
    pools: z.array(pool).default([]),
    /** Pods given by hand, kept across snapshots while their pool exists (local trials). */
    pods: z.array(ScorerPod).default([]),
    /**
     * Bind one SUB socket here for pods whose PUB connects to the scorer (vLLM connects when
     * its endpoint names a host); their batches are told apart by topic (kv@<pod>@<model>).
     */
    eventsBind: z
      .string()
      .regex(/^tcp:\/\/.+:(\d+|\*)$/)
      .nullable()
      .default(null),
    /**
     * GatewayBackend name → pool, for the edge's allowed-backends claim; a snapshot's own
     * backends take precedence over these.
     */
    backends: ScorerBackends.default({}),
    /**
     * Longest wait for the requests of a replaced pool runtime (new config) to finish
     * before it is closed; those still held by late binding then get an error.
     */
    drainTimeoutMs: z
      .int()
      .positive()
      .default(10 * 60_000),
    maxBodyBytes: z
      .int()
      .positive()
      .default(32 * 1024 * 1024),
    /** This replica's name in the shared state (control-plane/state); a fresh one when null. */
    replicaId: z.string().min(1).nullable().default(null),
    /** How often this replica writes its view of the pods there, and how long a view lives. */
    stateIntervalMs: z.int().positive().default(1_000),
    stateTtlMs: z.int().positive().default(5_000),
    /** Decision log entries kept (about: XADD MAXLEN ~), and how late a batch is written. */
    decisionLogLength: z.int().positive().default(10_000),
    decisionFlushMs: z.int().positive().default(100),
    /** The Endpoint Picker for a Gateway API gateway (gRPC ext_proc); off when null. */
    epp: EppConfig.nullable().default(null),
    /** The HTTP server's time and connection limits (slow and hostile clients). */
    server: NodeServerLimits.prefault({}),
    /** Retrying tokenizers that could not be loaded, and the runtime guard's thresholds. */
    tokenization: TokenizationOptions.prefault({}),
  })
}

/** The scorer's configuration under the built-in plugins. */
export const ScorerConfig = scorerConfigOf(ConfigSnapshot, ScorerPool)

/**
 * ScorerConfig under the plugins a scorer runs: a snapshot or pool of theirs parses (its
 * pools' strategies, its rules' conditions). Built each call: an entry point builds it once.
 */
export function scorerConfigSchema(plugins: Plugins): typeof ScorerConfig {
  if (
    plugins.conditions === builtinPlugins.conditions &&
    plugins.strategies === builtinPlugins.strategies
  )
    return ScorerConfig
  // Typed as the built-in ones: what they parse has the same shape (see snapshotSchemaOf).
  const spec = inferencePoolSpecSchema(plugins.strategies) as typeof InferencePoolSpec
  return scorerConfigOf(snapshotSchemaOf(plugins) as typeof ConfigSnapshot, scorerPoolOf(spec))
}

export type ScorerConfig = z.infer<typeof ScorerConfig>
export type ScorerConfigInput = z.input<typeof ScorerConfig>
