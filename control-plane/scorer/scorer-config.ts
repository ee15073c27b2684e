import { z } from 'zod'
import { InferencePoolSpec } from '../../shared/crd/inference-pool.ts'

/** A pod the scorer routes to: its OpenAI server and its KV-event sockets. */
export const ScorerPod = z.strictObject({
  name: z.string().min(1).max(253),
  pool: z.string().min(1),
  http: z.url({ protocol: /^https?$/ }),
  /** ZMQ PUB endpoint to connect a SUB socket to; null when the pod publishes no events. */
  events: z
    .string()
    .regex(/^tcp:\/\/.+:\d+$/)
    .nullable(),
  replay: z
    .string()
    .regex(/^tcp:\/\/.+:\d+$/)
    .nullable(),
})
export type ScorerPod = z.infer<typeof ScorerPod>

export const ScorerPool = z.strictObject({ name: z.string().min(1), spec: InferencePoolSpec })
export type ScorerPool = z.infer<typeof ScorerPool>

/** The scorer's whole configuration, parsed once at start and passed down. */
export const ScorerConfig = z.strictObject({
  host: z.string().default('127.0.0.1'),
  port: z.int().min(0).max(65_535),
  /** HMAC secrets shared with the edge; several, so one can be rotated. */
  signingSecrets: z.array(z.string().min(16, 'a signing secret needs at least 16 characters')),
  /** Accept requests without an edge signature: for local trials only, never in a cluster. */
  allowUnsigned: z.boolean().default(false),
  /** Bearer token of /admin; the admin API is off without one. */
  adminToken: z.string().min(16).nullable().default(null),
  /** Shared index in Redis when set (scorer replicas); in memory otherwise. */
  redisUrl: z.string().nullable().default(null),
  redisPrefix: z.string().default('kinf:'),
  pools: z.array(ScorerPool).min(1),
  pods: z.array(ScorerPod),
  /**
   * Bind one SUB socket here for pods whose PUB connects to the scorer (vLLM connects when
   * its endpoint names a host); their batches are told apart by topic (kv@<pod>@<model>).
   */
  eventsBind: z
    .string()
    .regex(/^tcp:\/\/.+:(\d+|\*)$/)
    .nullable()
    .default(null),
  /** GatewayBackend name → pool, from the snapshot, for the edge's allowed-backends claim. */
  backends: z
    .record(z.string(), z.strictObject({ pool: z.string(), model: z.string() }))
    .default({}),
  maxBodyBytes: z
    .int()
    .positive()
    .default(32 * 1024 * 1024),
})
export type ScorerConfig = z.infer<typeof ScorerConfig>
export type ScorerConfigInput = z.input<typeof ScorerConfig>
