import type { Tracer } from '@opentelemetry/api'
import type { Context } from 'hono'
import { z } from 'zod'
import type { ConfigSnapshot, SnapshotProvider } from '../../shared/config/config-snapshot.ts'
import type { Log } from '../../shared/logging/log.ts'
import type { ChatCompletionRequest } from '../../shared/openai/chat-completion-request.ts'
import { maxJsonDepth } from '../../shared/openai/json-depth.ts'
import type { ResponseStore } from '../../shared/openai/responses/response-store.ts'
import type { detectPii } from '../../shared/pii/detect-pii.ts'
import type { Plugins } from '../../shared/plugins.ts'
import type { QuotaStore } from '../../shared/quota/quota-store.ts'
import type { QuotaLedgerReader } from '../../shared/state/quota-ledger-reader.ts'
import type { CacheSalter } from '../../shared/tenancy/cache-salt.ts'
import type { EdgeDecisionLog } from './edge-decision-log.ts'
import type { EdgeMetrics } from './edge-metrics.ts'
import type { ScorerPort } from './scorer-client.ts'

/** An external provider (Bedrock), as the edge uses it. */
export interface ExternalPort {
  /** An OpenAI-shaped answer (JSON or SSE); throws a KinfError before any byte on failure. */
  complete(
    provider: SnapshotProvider,
    model: string,
    request: ChatCompletionRequest,
    options: { requestedModel: string; requestId: string; signal?: AbortSignal },
  ): Promise<Response>
  /**
   * The tokens the provider counts for `request` followed by `answerSoFar` (what it
   * generated before the client left), by its own tokenizer; null when it cannot say (the
   * edge then charges its estimate). Never throws.
   */
  countTokens(
    provider: SnapshotProvider,
    model: string,
    request: ChatCompletionRequest,
    answerSoFar: string,
  ): Promise<number | null>
}

/** What the edge app needs from its runtime; Workers and Node each supply their own. */
export interface EdgeDeps {
  /** The current config snapshot (verified, with the schema of `plugins`). */
  config: () => Promise<ConfigSnapshot>
  /** The conditions its policies' rules are read with; the built-in plugins when absent. */
  plugins?: Plugins
  quotas: QuotaStore
  /**
   * Reads the shared quota store's buckets for the x-ratelimit-* headers (on Node, the Redis
   * reader of control-plane/state); absent, the store itself when it can be read (the
   * in-memory one), else the headers carry the limits only (docs/edge-keys-and-errors.md §1.8).
   */
  quotaReader?: QuotaLedgerReader
  scorer: ScorerPort
  external: ExternalPort
  metrics: EdgeMetrics
  nowMs: () => number
  sleep: (ms: number) => Promise<void>
  newRequestId: () => string
  /** Lines with a level and, about a request, its id (JSON lines on Node: control-plane/logging). */
  log: Log
  /**
   * Each request's spans (its server span, one per stage, one per provider call), and the
   * trace context its upstream calls carry; no spans when absent (tracing is off by default).
   */
  tracer?: Tracer
  /**
   * The shared decision log, for the external attempts the edge makes on decisions the
   * scorer did not log (edge-decision-log.ts); those go unlogged when absent.
   */
  decisions?: EdgeDecisionLog
  /** One access-log line per request (log-edge-access.ts); on unless false. */
  accessLog?: boolean
  /** Largest request body accepted (see EdgeLimits). */
  maxBodyBytes?: number
  /** The other limits of EdgeLimits, where they differ from its defaults. */
  limits?: z.input<typeof EdgeLimits>
  /** The PII detectors (shared/pii by default); replaceable to test failing detectors. */
  detectPii?: typeof detectPii
  /**
   * Where /v1/responses keeps the conversations previous_response_id continues (Redis on
   * Node, shared by replicas); this isolate's memory when absent.
   */
  responses?: ResponseStore
  /** Output tokens assumed for quota admission when a request sets no max_tokens (see EdgeLimits). */
  defaultMaxTokens?: number
  /**
   * The client's address, as the runtime knows it (Cloudflare's cf-connecting-ip, Node's
   * socket): failed authentications are limited per address too. Null: unknown.
   */
  clientAddress?: (c: Context) => string | null
  /** Failed authentications allowed per address or key id per minute (see EdgeLimits). */
  authFailuresPerMinute?: number
  /**
   * cache_salt of tenants whose prefix cache is isolated, keyed by the signing secret
   * (shared/tenancy/cache-salt.ts). Absent: a random key per app, which still isolates
   * tenants but splits each tenant's cache between edge processes.
   */
  cacheSalter?: CacheSalter
}

/** The edge's limits, defaults included: parsed once when the app is built. */
export const EdgeLimits = z.strictObject({
  maxBodyBytes: z
    .int()
    .positive()
    .default(8 * 1024 * 1024),
  /** Quota admission reserves this much output for a request without max_tokens. */
  defaultMaxTokens: z.int().positive().default(1_024),
  /** Past this many failed authentications in a minute, a client address or key id gets 429s. */
  authFailuresPerMinute: z.int().positive().default(20),
  /**
   * Request headers, names and values: 431 beyond. Node's own parser (start-edge) is set
   * to this plus room for the request line; Cloudflare's edge allows 128 KB.
   */
  maxHeaderBytes: z
    .int()
    .positive()
    .default(32 * 1024),
  /** Chat messages per request: 400 naming messages beyond. */
  maxMessages: z.int().positive().default(2_048),
  /** Tools per request (OpenAI's own bound). */
  maxTools: z.int().positive().default(128),
  /** Nesting of the JSON body (objects and arrays): 400 beyond (the scorer's limit too). */
  maxJsonDepth: z.int().positive().default(maxJsonDepth),
  /** Choices per request (`n`, completions' `best_of`). */
  maxChoices: z.int().positive().default(128),
  /** Stop sequences per request (OpenAI takes 4, vLLM any number). */
  maxStopSequences: z.int().positive().default(16),
  /** Largest max_tokens or max_completion_tokens. */
  maxOutputTokens: z.int().positive().default(131_072),
  /**
   * Prompt (estimated) plus max_tokens, for a model no pool gives a maxContextTokens
   * (Bedrock's, aliases): 400 context_length_exceeded beyond.
   */
  maxRequestTokens: z.int().positive().default(262_144),
  /** A stream open longer than this is ended with an error event and its upstream cancelled. */
  maxStreamSeconds: z.number().positive().default(900),
  /** A stream whose client has read nothing for this long (backpressure) is cut. */
  streamStallSeconds: z.number().positive().default(60),
})
export type EdgeLimits = z.infer<typeof EdgeLimits>
