import { z } from 'zod'
import { logLevels } from '../../shared/logging/log.ts'
import type { QuotaLedgerNamespace } from './durable-object-quota-store.ts'
import type { SnapshotKv } from './kv-snapshot-loader.ts'

/**
 * The Worker's variables and secrets (wrangler.toml [vars], wrangler secret put, .dev.vars),
 * checked at runtime. They are not in the generated Env: secrets live outside wrangler.toml,
 * and cf-typegen reads no .dev.vars so the generated file is the same on every machine.
 */
export const WorkerEnv = z.looseObject({
  /** The in-cluster scorer, as reachable from Cloudflare (a tunnel or a public ingress). */
  SCORER_URL: z.url({ protocol: /^https?$/ }),
  /** HMAC secret shared with the scorer (KINFERENCE_SIGNING_SECRETS there). */
  KINFERENCE_SIGNING_SECRET: z.string().min(16, 'needs at least 16 characters'),
  /** Bedrock keys: Workers have no AWS credential chain, so they are passed explicitly. */
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  /** Bearer token of GET /metrics, the isolate's counters (worker-metrics-route.ts); unset: not served. */
  METRICS_TOKEN: z.string().min(16, 'needs at least 16 characters').optional(),
  /** Log lines below this level are dropped (the services' KINFERENCE_LOG_LEVEL, docs/logs.md). */
  KINFERENCE_LOG_LEVEL: z.enum(logLevels).default('info'),
  /**
   * Tracing (docs/tracing.md): the edge's spans go over OTLP/HTTP (protobuf) to the
   * collector named here, off unless one is. Read, with the other OTEL_* vars the services
   * read, by worker-tracing.ts; OTEL_EXPORTER_OTLP_HEADERS carries credentials: a secret.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  /** service.name; kinference-edge by default. */
  OTEL_SERVICE_NAME: z.string().optional(),
  OTEL_TRACES_SAMPLER: z.string().optional(),
  OTEL_TRACES_SAMPLER_ARG: z.string().optional(),
  /** How long an isolate reuses the snapshot it read from KV. */
  CONFIG_CACHE_SECONDS: z.coerce.number().min(0).max(3_600).default(30),
})
export type WorkerEnv = z.infer<typeof WorkerEnv>

/**
 * The bindings as `npm run cf-typegen` generates them from wrangler.toml into
 * worker-configuration.d.ts (Cloudflare.Env, the type of cloudflare:workers' `env`), so a
 * binding renamed or retyped there fails workers/tsconfig.json's type-check where index.ts
 * hands it to a port. Node's type-check (tsconfig.json, which reaches index.ts through its
 * tests) cannot load those runtime declarations and sees a loose cloudflare:workers
 * (test/support/cloudflare-modules.d.ts) whose `env` is an index signature; there the
 * ports stand in.
 */
export type WorkerBindings = string extends keyof GeneratedEnv
  ? PortBindings
  : Pick<GeneratedEnv, keyof PortBindings>

type GeneratedEnv = typeof import('cloudflare:workers').env

/** What the edge needs of the bindings: the ports its tests fill with in-memory stand-ins. */
interface PortBindings {
  CONFIG: SnapshotKv
  QUOTA_LEDGER: QuotaLedgerNamespace
}
