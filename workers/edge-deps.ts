import type { Context } from 'hono'
import { z } from 'zod'
import type { ConfigSnapshot, SnapshotProvider } from '../shared/config/config-snapshot.ts'
import type { ChatCompletionRequest } from '../shared/openai/chat-completion-request.ts'
import type { detectPii } from '../shared/pii/detect-pii.ts'
import type { QuotaStore } from '../shared/quota/quota-store.ts'
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
}

/** What the edge app needs from its runtime; Workers and Node each supply their own. */
export interface EdgeDeps {
  /** The current config snapshot (verified). */
  config: () => Promise<ConfigSnapshot>
  quotas: QuotaStore
  scorer: ScorerPort
  external: ExternalPort
  metrics: EdgeMetrics
  nowMs: () => number
  sleep: (ms: number) => Promise<void>
  newRequestId: () => string
  log: (line: string) => void
  /** Largest request body accepted (see EdgeLimits). */
  maxBodyBytes?: number
  /** The PII detectors (shared/pii by default); replaceable to test failing detectors. */
  detectPii?: typeof detectPii
  /** Serve GET /metrics (Node; a Worker's counters are per isolate and not scraped). */
  exposeMetrics?: boolean
  /** Output tokens assumed for quota admission when a request sets no max_tokens (see EdgeLimits). */
  defaultMaxTokens?: number
  /**
   * The client's address, as the runtime knows it (Cloudflare's cf-connecting-ip, Node's
   * socket): failed authentications are limited per address too. Null: unknown.
   */
  clientAddress?: (c: Context) => string | null
  /** Failed authentications allowed per address or key id per minute (see EdgeLimits). */
  authFailuresPerMinute?: number
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
})
export type EdgeLimits = z.infer<typeof EdgeLimits>
