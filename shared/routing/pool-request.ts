import { type InferencePoolSpec, type ModelTask, taskOf } from '../crd/inference-pool.ts'
import { type BlockKeyChain, computeBlockKeys } from '../kv-index/block-keys.ts'
import { type MmPlacement, mmBlockExtras } from '../kv-index/mm-block-extras.ts'
import type { TierBlocks } from '../kv-index/tier-lookup.ts'
import type { RoutingRequest } from './routing-strategy.ts'

/**
 * A served model of the pool (the spec's ServedModel) as a request names it: the model
 * itself or one of its LoRA adapters.
 */
export interface ResolvedModel {
  /** The model whose tokenizer and chat template apply. */
  baseModel: string
  /** The adapter, when the request named one. */
  loraName: string | null
  tokenizer: string
  maxContextTokens: number
  /**
   * Which API the model answers (the spec's task, Generate when unset); null for a name a
   * "*" entry serves that declares no task (a pool of defaults): its pods decide.
   */
  task: ModelTask | null
}

/** What the router needs of a request: its prompt as the pod will run it, and its limits. */
export interface PoolRequestInput {
  id: string
  /** As the client named it: a served model or one of its LoRA adapters. */
  model: string
  promptIds: readonly number[]
  /** The prompt's images the router can identify, sorted by offset (none when absent). */
  mmFeatures?: readonly MmPlacement[]
  maxTokens: number
  cacheSalt: string | null
  /** What the character-based peers hash; asked for only when the pool's strategy reads it. */
  promptText: () => string
  /** Who is charged for it in token-fair admission (FairQueue); absent: one anonymous tenant. */
  tenant?: string
}

/** A request ready to route: what the strategy sees, and its block keys. */
export interface PoolRequest {
  routing: RoutingRequest
  keys: BlockKeyChain
  /** Its tenant, for token-fair admission; absent: one anonymous tenant. */
  tenant?: string
}

/** The index's answer for one request, by pod name: positions never carry meaning. */
export interface PoolLookup {
  request: PoolRequest
  blocks: ReadonlyMap<string, number>
  /**
   * Per pod holding some, the request's blocks in its other tiers continuing its GPU hit
   * (TierLookup); absent when the pool keeps no tier holdings or no pod has a tier.
   */
  tierBlocks?: ReadonlyMap<string, TierBlocks>
}

/** The served model name that stands for any model a request names. */
export const anyModel = '*'

/**
 * The served model `model` names in `spec` (an exact name or adapter first, then a served
 * model "*", which serves any name as itself), or null when the pool does not serve it.
 */
export function resolveModel(spec: InferencePoolSpec, model: string): ResolvedModel | null {
  if (model === anyModel) return null
  for (const served of spec.models) {
    if (served.name === model || served.loraAdapters?.includes(model)) {
      return {
        baseModel: served.name,
        loraName: served.name === model ? null : model,
        tokenizer: served.tokenizer,
        maxContextTokens: served.maxContextTokens,
        task: taskOf(served),
      }
    }
  }
  const any = spec.models.find((served) => served.name === anyModel)
  if (!any) return null
  return {
    baseModel: model,
    loraName: null,
    tokenizer: any.tokenizer,
    maxContextTokens: any.maxContextTokens,
    task: any.task ?? null,
  }
}

/**
 * Block keys as the pods hash the prompt (model, adapter, cache_salt, and each block's
 * images, as read-extra-keys.ts reads the pods'), with the block size the pool's pods
 * use, and what the strategy routes on (the prompt's text only for one that reads it).
 * An image the router cannot identify is not among mmFeatures: its blocks are keyed
 * without it and never match a pod's, so the request routes as a cache miss from there on.
 */
export function poolRequest(
  input: PoolRequestInput,
  served: ResolvedModel | null,
  blockSize: number,
  usesPromptText: boolean,
): PoolRequest {
  const blocks = Math.floor(input.promptIds.length / blockSize)
  const extras = mmBlockExtras(input.mmFeatures ?? [], blockSize, blocks)
  const seed = {
    model: served?.baseModel ?? input.model,
    loraName: served?.loraName ?? null,
    cacheSalt: input.cacheSalt,
  }
  const keys = computeBlockKeys(input.promptIds, blockSize, seed, extras)
  const routing: RoutingRequest = {
    id: input.id,
    model: input.model,
    promptTokens: input.promptIds.length,
    blockSize,
    promptText: usesPromptText ? input.promptText() : '',
    maxTokens: input.maxTokens,
    blockKeys: keys,
  }
  return input.tenant === undefined ? { routing, keys } : { routing, keys, tenant: input.tenant }
}
