import type { Context, MiddlewareHandler, Next } from 'hono'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { Stage } from '../../../shared/tracing/stage-spans.ts'
import type { AccountQuotas } from '../admit-quota.ts'
import type { EdgeOutcome } from '../decide-request.ts'
import type { EdgeRequest } from '../read-edge-request.ts'
import type { EmbeddingEdgeRequest } from '../read-embedding-request.ts'
import type { ChargeBasis } from '../request-charge.ts'
import { type RequestTrace, type StageTrace, stageSpan } from './stage-span.ts'

/**
 * What the stages of a request hand on, in the order they set it (edge-app.ts lists the
 * stages). Each stage's context holds only what it reads and what it sets.
 */
export interface EdgeVariables {
  /** tagRequest: the id the answer and its errors carry (the client's, when a sane one). */
  requestId: string
  /** tagRequest: the edge's own id, signed to the scorer (which keys its log on it). */
  edgeId: string
  /** tagRequest: headers passed upstream (shared/attempts/pass-through-headers.ts). */
  passHeaders: Record<string, string>
  /** authenticateTenant: the config snapshot this request is served under. */
  snapshot: ConfigSnapshot
  /** authenticateTenant: who sent it. */
  identity: { tenant: string; keyId: string }
  /** tenantTerms: what the tenant's policy grants it. */
  terms: TenantTerms
  /** readRequest: the body parsed, checked against the limits, and labelled. */
  request: EdgeRequest
  /** readEmbedding (POST /v1/embeddings, in place of readRequest): the same, for embeddings. */
  embedding: EmbeddingEdgeRequest
  /** admitRequest (or admitEmbedding): what the quota admitted, and how to settle it. */
  admitted: QuotaGrant
  /** admitRequest: OpenAI's x-ratelimit-* headers for the tenant's quotas, its answer's. */
  rateLimits: Record<string, string>
  /** decide: served already by the scorer, or a decision to carry out. */
  outcome: EdgeOutcome
  /**
   * traceEdgeRequests (app-level, before every stage, only when tracing is on): where the
   * stages' spans go, under the request's own span.
   */
  trace: RequestTrace
}

export type EdgeVariableName = keyof EdgeVariables

/** The Hono environment of the edge app: every variable, as the error handler sees them. */
export type EdgeEnv = { Variables: EdgeVariables }

/** What the tenant's policy grants it, looked up once per request. */
export interface TenantTerms {
  /** Its quotas (none: unlimited). */
  quotas: AccountQuotas
  /** It may see the routing headers (shared/policy/decision-headers-visible.ts). */
  decisionHeaders: boolean
}

/** A request admitted against its tenant's quota. */
export interface QuotaGrant {
  /** What it was admitted on (see request-charge.ts). */
  basis: ChargeBasis
  /** Tokens it was admitted on: prompt + sequences × max_tokens. */
  estimatedTokens: number
  /**
   * Settles the quota on what the request used: tokens, or a promise of them (a provider's
   * count). The first call counts; later ones are ignored.
   */
  charge: (tokens: number | Promise<number>) => void
}

/** The context of a stage that reads or sets only `Names`. */
export type StageContext<Names extends EdgeVariableName> = Context<{
  Variables: Pick<EdgeVariables, Names>
}>

/**
 * One stage of a request: Hono middleware that reads the variables `Reads` (set by stages
 * before it) and sets `Sets`, which are listed so that inOrder can check the order.
 */
export interface EdgeStage<Reads extends EdgeVariableName, Sets extends EdgeVariableName> {
  readonly name: string
  /** The stage's span (shared/tracing/stage-spans.ts); none for bookkeeping stages. */
  readonly span?: Stage
  readonly reads: readonly Reads[]
  readonly sets: readonly Sets[]
  readonly run: MiddlewareHandler<EdgeEnv>
}

/**
 * A stage whose handler's context holds only what it declares. A stage with a `span` runs
 * in one while the request is traced: from its start until it hands on (calls next), or
 * answers or fails; its handler gets the span for the calls it makes upstream.
 */
export function edgeStage<
  const Reads extends EdgeVariableName = never,
  const Sets extends EdgeVariableName = never,
>(
  name: string,
  uses: { reads?: readonly Reads[]; sets?: readonly Sets[]; span?: Stage },
  run: (
    c: StageContext<Reads | Sets>,
    next: Next,
    trace: StageTrace | undefined,
  ) => Promise<Response | undefined>,
): EdgeStage<Reads, Sets> {
  // The full context holds every variable the narrower one names.
  const narrow = (c: Context<EdgeEnv>) => c as unknown as StageContext<Reads | Sets>
  const { span } = uses
  return {
    name,
    reads: uses.reads ?? [],
    sets: uses.sets ?? [],
    ...(span === undefined ? {} : { span }),
    run: (c, next) =>
      (span === undefined
        ? run(narrow(c), next, undefined)
        : stageSpan(c.get('trace'), span, (traced, handOn) =>
            run(narrow(c), () => handOn(next), traced),
          )) as Promise<void>,
  }
}

// biome-ignore lint/suspicious/noExplicitAny: any stage, whatever it reads and sets
type AnyStage = EdgeStage<any, any>

/** `Stages` unchanged when each reads only what an earlier one set; else a message type. */
type InOrder<
  Stages extends readonly unknown[],
  Set extends string = never,
> = Stages extends readonly [infer First, ...infer Rest]
  ? First extends EdgeStage<infer Reads, infer Sets>
    ? [Exclude<Reads, Set>] extends [never]
      ? readonly [First, ...InOrder<Rest, Set | Sets>]
      : readonly [`${Exclude<Reads, Set>} is read before any stage sets it`]
    : never
  : readonly []

/**
 * The stages of a route as Hono handlers, run in the order given. The order is checked
 * twice: by the type-checker, and here when the app is built (so a test can see it).
 */
export function inOrder<const Stages extends readonly AnyStage[]>(
  ...stages: Stages & InOrder<Stages>
): [MiddlewareHandler<EdgeEnv>, ...MiddlewareHandler<EdgeEnv>[]] {
  const set = new Set<string>()
  for (const stage of stages as readonly AnyStage[]) {
    const missing = stage.reads.filter((name: string) => !set.has(name))
    if (missing.length > 0)
      throw new KinfError(
        'internal',
        `stage ${stage.name} reads ${missing.join(', ')} before any stage sets it`,
      )
    for (const name of stage.sets) set.add(name)
  }
  const [first, ...rest] = (stages as readonly AnyStage[]).map((stage) => stage.run)
  if (!first) throw new KinfError('internal', 'a route needs at least one stage')
  return [first, ...rest]
}
