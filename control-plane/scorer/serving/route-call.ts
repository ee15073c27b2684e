import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { estimateRequestPromptTokens } from '../../../shared/openai/estimate-request-tokens.ts'
import { checkJsonDepth } from '../../../shared/openai/json-depth.ts'
import {
  type OpenAiRequest,
  parseOpenAiRequest,
  type RequestKind,
} from '../../../shared/openai/openai-request.ts'
import type { PolicyRequest } from '../../../shared/policy/policy-decision.ts'
import { splitRouteEnvelope } from '../../../shared/scorer-api/route-protocol.ts'
import type { Prompt } from '../../tokenizer/prompt-ids.ts'
import { parseJson } from '../http/read-body.ts'
import { authenticate, type SignedRequest } from '../http/signed-request.ts'
import type { RouteHandlerContext } from './inference-context.ts'

/** A request read from a route call, with what policy needs of it. */
export interface RouteCall {
  signed: SignedRequest
  snapshot: ConfigSnapshot
  openAi: OpenAiRequest
  /** The client's body as sent (what the pod gets unless policy renames the model). */
  body: Buffer
  facts: PolicyRequest
  /** Prompts by tokenizer: pools sharing a tokenizer share one tokenization. */
  tokenized: Map<string, Prompt>
}

/**
 * A route call read: the edge's signature checked, the policy bundle and the body split
 * and parsed, the prompt's length the edge's estimate until a pool's tokenizer counts.
 */
export async function readRouteCall(
  context: RouteHandlerContext,
  kind: RequestKind,
  signed: SignedRequest,
): Promise<RouteCall> {
  const claims = await authenticate(context, signed)
  const envelope = splitRouteEnvelope(signed.body)
  if (!envelope)
    throw new KinfError(
      'invalid_request',
      'a route call is the policy bundle, a newline, then the request body',
    )
  const snapshot = context.bundles.get(envelope.bundleJson)
  const body = Buffer.from(envelope.body.buffer, envelope.body.byteOffset, envelope.body.byteLength)
  const json = parseJson(body)
  checkJsonDepth(json)
  const parsed = parseOpenAiRequest(kind, json)
  if ('issues' in parsed)
    throw new KinfError('invalid_request', parsed.issues.message, { param: parsed.issues.param })
  const openAi = parsed.request
  const model = openAi.body.model
  if (model === undefined)
    throw new KinfError('invalid_request', 'you must provide a model parameter', { param: 'model' })
  // The edge's estimate (or one by the same function) until a pool's tokenizer counts.
  const promptTokens = claims.promptTokens ?? estimateRequestPromptTokens(openAi)
  return {
    signed,
    snapshot,
    openAi,
    body,
    facts: {
      tenant: claims.tenant,
      model,
      promptTokens,
      labels: claims.labels,
      detectorFailed: claims.detectorFailed ?? false,
      ...(claims.sloTtftMs === undefined ? {} : { sloTtftMs: claims.sloTtftMs }),
    },
    tokenized: new Map(),
  }
}

/**
 * The runtime of the pool the edge's snapshot names by id; a pool given to the scorer
 * without namespace answers for its name in any namespace.
 */
export function runtimeOf(context: RouteHandlerContext, snapshot: ConfigSnapshot, poolId: string) {
  const name = snapshot.pools[poolId]?.name
  return (
    context.pools.find((pool) => pool.id === poolId) ??
    context.pools.find((pool) => pool.namespace === null && pool.name === name) ??
    null
  )
}

/** The text the pod gets when it is the client's own (see bodyFor), else null. */
export function textFor(call: RouteCall, model: string): string | null {
  return model === call.facts.model ? call.body.toString('utf8') : null
}

/** The client's bytes, unless policy sends the request under another model name. */
export function bodyFor(call: RouteCall, model: string): Buffer {
  if (model === call.facts.model) return call.body
  return Buffer.from(JSON.stringify({ ...call.openAi.body, model }))
}
