import { z } from 'zod'
import type { QuotaLedgerNamespace } from './durable-object-quota-store.ts'
import type { SnapshotKv } from './kv-snapshot-loader.ts'

/** The Worker's variables and secrets (wrangler.toml [vars], wrangler secret put). */
export const WorkerEnv = z.looseObject({
  /** The in-cluster scorer, as reachable from Cloudflare (a tunnel or a public ingress). */
  SCORER_URL: z.url({ protocol: /^https?$/ }),
  /** HMAC secret shared with the scorer (KINFERENCE_SIGNING_SECRETS there). */
  KINFERENCE_SIGNING_SECRET: z.string().min(16, 'needs at least 16 characters'),
  /** Bedrock keys: Workers have no AWS credential chain, so they are passed explicitly. */
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  /** How long an isolate reuses the snapshot it read from KV. */
  CONFIG_CACHE_SECONDS: z.coerce.number().min(0).max(3_600).default(30),
})
export type WorkerEnv = z.infer<typeof WorkerEnv>

/** The bindings (wrangler.toml), typed as the edge uses them. */
export interface WorkerBindings {
  CONFIG: SnapshotKv
  QUOTA_LEDGER: QuotaLedgerNamespace
}
