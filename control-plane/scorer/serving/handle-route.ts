import type { IncomingMessage, ServerResponse } from 'node:http'
import { attemptPlanner, fallbackHeaders } from '../../../shared/attempts/attempt-planner.ts'
import { passThroughHeaders } from '../../../shared/attempts/pass-through-headers.ts'
import { burstsWhenUnattainable } from '../../../shared/crd/service-level.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { RequestKind } from '../../../shared/openai/openai-request.ts'
import { decidePolicy } from '../../../shared/policy/evaluate-policy.ts'
import { heldLocalBy } from '../../../shared/policy/held-local-by.ts'
import { holdTermsOf, ruleServiceLevel } from '../../../shared/policy/hold-terms.ts'
import {
  type InterpretedRequest,
  interpretRequest,
} from '../../../shared/policy/interpret-request.ts'
import type {
  PolicyDecision,
  PoolStatus,
  UpstreamTarget,
} from '../../../shared/policy/policy-decision.ts'
import { decidedHeader, type RouteDecision } from '../../../shared/scorer-api/route-protocol.ts'
import type { TraceScope } from '../../../shared/tracing/in-span.ts'
import { readSignedRequest, type SignedRequest } from '../http/signed-request.ts'
import { logExternalDecision } from '../state/log-decision.ts'
import type { PoolAttempt } from './attempt-record.ts'
import type { RouteHandlerContext } from './inference-context.ts'
import { lookupInSpan, tokenizeInSpan } from './lookup-spans.ts'
import { prepareOnPool } from './prepare-request.ts'
import { openRequestTrail, type RequestTrail } from './request-trail.ts'
import { bodyFor, type RouteCall, readRouteCall, runtimeOf, textFor } from './route-call.ts'
import { serveOnPool } from './serve-on-pool.ts'

/**
 * POST /v1/kinference/route/… (see shared/scorer-api/route-protocol.ts): the request and the
 * tenant's policy in one signed call. Each pool the decision may depend on is prepared
 * and looked up once; the policy is evaluated on their statuses with the exact prompt
 * length; the first local attempt is served here, reusing that preparation. Otherwise the
 * decision goes back to the edge, which carries on from the attempt it names.
 */
export async function handleRoute(
  context: RouteHandlerContext,
  kind: RequestKind,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const startedMs = performance.now()
  const trail = openRequestTrail(context, req, res, startedMs)
  try {
    await serveRoute(context, kind, req, res, { trail, startedMs })
  } catch (error) {
    trail.fail(error)
    throw error
  } finally {
    trail.done()
  }
}

async function serveRoute(
  context: RouteHandlerContext,
  kind: RequestKind,
  req: IncomingMessage,
  res: ServerResponse,
  { trail, startedMs }: { trail: RequestTrail; startedMs: number },
): Promise<void> {
  const signed = await readSignedRequest(context, req, res)
  trail.identify(signed.requestId)
  const { call, decision, asked } = await decideRoute(context, kind, signed, trail.scope)
  const promptTokens = call.facts.promptTokens
  trail.note({
    ...(call.facts.tenant === '' ? {} : { tenant: call.facts.tenant }),
    model: call.facts.model,
    prompt_tokens: promptTokens,
  })
  if (decision.kind !== 'serve')
    return answerDecision(res, trail, { decision, from: 0, notes: [], promptTokens })
  const { labels, detectorFailed } = call.facts
  const level = ruleServiceLevel(call.snapshot, decision.policy, decision.rule)
  const planner = attemptPlanner(decision, {
    heldBy: heldLocalBy(call.snapshot, decision.policy, labels, detectorFailed),
  })
  let step = planner.first()
  while (step.kind === 'try') {
    const { target } = step
    // An external attempt is the edge's to make: it goes on from here, logged as handed over.
    if (target.locality === 'External') {
      logExternalDecision(context, {
        requestId: signed.requestId,
        startedMs,
        decidedBy: {
          tenant: call.facts.tenant === '' ? null : call.facts.tenant,
          policy: decision.policy,
          rule: decision.rule,
          backend: target.backend,
        },
        provider: target.provider ?? target.backend,
        model: target.model,
        promptTokens,
        clientRequestId: signed.headers('x-request-id'),
      })
      return answerDecision(res, trail, {
        decision,
        from: step.index,
        notes: [...step.notes],
        promptTokens,
      })
    }
    const attempt = await attemptFor(context, call, asked, target, trail.scope)
    if (!attempt) {
      step = planner.after(step, {
        kind: 'skipped',
        why: `pool ${target.pool} is not served by this scorer`,
      })
      continue
    }
    const served = await serveOnPool(context, attempt, res, {
      requestId: signed.requestId,
      startedMs,
      body: bodyFor(call, target.model),
      headers: passThroughHeaders(signed.headers, signed.requestId),
      allowBurst: step.allowBurst,
      decisionPrefix: step.decisionHeader,
      decidedBy: {
        tenant: call.facts.tenant === '' ? null : call.facts.tenant,
        policy: decision.policy,
        rule: decision.rule,
        backend: target.backend,
      },
      extraHeaders: fallbackHeaders(step.notes),
      hold: holdTermsOf(level, call.facts.sloTtftMs, performance.now()),
      burstWhenHeldTooLong: burstsWhenUnattainable(level),
      trail,
    })
    if (served.kind === 'served') return
    step = planner.after(step, { kind: 'saturated' })
  }
  // Nothing left to try: the edge answers (a request that must stay local, its refusal).
  answerDecision(res, trail, {
    decision,
    from: step.from,
    notes: [...step.notes],
    promptTokens,
  })
}

/**
 * Everything a route call needs before a pod: the edge's signature checked, the bundle and
 * the body parsed, each pool the decision may depend on prepared and looked up once, and
 * the policy evaluated on their statuses with the exact prompt length.
 */
export async function decideRoute(
  context: RouteHandlerContext,
  kind: RequestKind,
  signed: SignedRequest,
  /** Where the tokenize and index_lookup spans go; absent: tracing is off. */
  scope?: TraceScope,
): Promise<{ call: RouteCall; decision: PolicyDecision; asked: Map<string, PoolAttempt> }> {
  const call = await readRouteCall(context, kind, signed)
  const asked = new Map<string, PoolAttempt>()
  const statuses = new Map<string, PoolStatus>()
  const interpreted = await askPools(context, call, asked, statuses, scope)
  const decision = decidePolicy(interpreted, (id) => statuses.get(id))
  return { call, decision, asked }
}

/**
 * Prepares and looks up the request on every pool its decision may depend on that this
 * scorer serves, and takes each pool's status for this prompt. The exact prompt length
 * (the largest over those pools) replaces the estimate; if that changes which pools matter,
 * the new ones are asked too, once. Returns the rules' reading of the request as it then
 * stands (read again only when the count changed), for the decision.
 */
async function askPools(
  context: RouteHandlerContext,
  call: RouteCall,
  asked: Map<string, PoolAttempt>,
  statuses: Map<string, PoolStatus>,
  scope: TraceScope | undefined,
): Promise<InterpretedRequest> {
  // The bundle's rules are read with the conditions it was parsed with.
  const { conditions } = context.bundles
  let interpreted = interpretRequest(call.snapshot, call.facts, conditions)
  for (let round = 0; round < 2; round++) {
    const ids = interpreted.pools.filter((id) => !asked.has(id))
    for (const id of ids) {
      const runtime = runtimeOf(context, call.snapshot, id)
      if (!runtime) continue
      const served =
        runtime.spec.models.find((m) => m.name === call.facts.model) ?? runtime.spec.models[0]
      if (!served) continue
      const { requestId } = call.signed
      let prepared: PoolAttempt['prepared']
      try {
        prepared = await tokenizeInSpan(scope, { requestId, pool: runtime.id }, () =>
          prepareOnPool(
            requestId,
            call.openAi,
            runtime,
            served.name,
            call.tokenized,
            textFor(call, served.name),
            call.facts.tenant,
          ),
        )
      } catch (error) {
        // This pool cannot take the prompt (too long for it, say): its status stays unknown,
        // and only a decision for it answers the error.
        if (KinfError.isInstance(error) && error.status < 500) continue
        throw error
      }
      const { lookup, scored: route } = await lookupInSpan(scope, prepared, requestId, async () => {
        const lookup = await runtime.lookup(prepared.request)
        return { lookup, scored: runtime.router.score(lookup, performance.now()) }
      })
      asked.set(id, { prepared, lookup, scored: route })
      const predicted = runtime.router.prediction(lookup, route)
      statuses.set(id, {
        ...(runtime.router.podNames().length === 0
          ? { saturation: 1, saturated: true }
          : runtime.router.saturation(route)),
        predictedTtftMs: predicted?.ttftMs ?? null,
        predictedTpotMs: predicted?.tpotMs ?? null,
      })
    }
    if (ids.length === 0 || asked.size === 0) return interpreted
    // A pool's count is its pods' prompt, tool definitions included (its chat template
    // renders them, as vLLM's does); a pool without its tokenizer has the edge's estimate,
    // which counts them too (estimateRequestPromptTokens).
    const counts = [...asked.values()].map(({ prepared }) => prepared.request.routing.promptTokens)
    const promptTokens = Math.max(...counts)
    if (promptTokens !== call.facts.promptTokens) {
      call.facts = { ...call.facts, promptTokens }
      interpreted = interpretRequest(call.snapshot, call.facts, conditions)
    }
  }
  return interpreted
}

/** The request prepared for the attempt's pool and model: the asked one, or prepared now. */
async function attemptFor(
  context: RouteHandlerContext,
  call: RouteCall,
  asked: Map<string, PoolAttempt>,
  target: UpstreamTarget,
  scope: TraceScope | undefined,
): Promise<PoolAttempt | null> {
  if (target.pool === undefined) return null
  const known = asked.get(target.pool)
  if (known && known.prepared.model === target.model) return known
  const runtime = runtimeOf(context, call.snapshot, target.pool)
  if (!runtime) return null
  const { requestId } = call.signed
  const prepared = await tokenizeInSpan(scope, { requestId, pool: runtime.id }, () =>
    prepareOnPool(
      requestId,
      call.openAi,
      runtime,
      target.model,
      call.tokenized,
      textFor(call, target.model),
      call.facts.tenant,
    ),
  )
  return lookupInSpan(scope, prepared, requestId, async () => ({
    prepared,
    lookup: await runtime.lookup(prepared.request),
  }))
}

/** The decision goes back to the edge, which serves the request (the access line says so). */
function answerDecision(res: ServerResponse, trail: RequestTrail, answer: RouteDecision): void {
  trail.note({ answered_by: 'edge' })
  res.writeHead(200, { 'content-type': 'application/json', [decidedHeader]: '1' })
  res.end(JSON.stringify(answer))
}
