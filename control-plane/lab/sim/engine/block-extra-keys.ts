import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import type { EngineExtraKey, MultimodalFeature } from './engine-kv-event.ts'

/** What of a request enters its blocks' extra keys. */
export interface ExtraKeySource {
  loraName: string | null
  cacheSalt: string | null
  /** Sorted by offset, not overlapping (checked by `checkMultimodal`). */
  multimodal: readonly MultimodalFeature[]
}

/**
 * vLLM's `generate_block_hash_extra_keys` (`vllm/v1/core/kv_cache_utils.py`) for the
 * block of tokens [start, end): the LoRA name, then every multimodal input the block
 * overlaps as (identifier, its offset minus the block start, negative when it began in an
 * earlier block), then `cache_salt` when the block starts the sequence; null when there
 * is none. Prompt embeddings are not simulated.
 */
export function blockExtraKeys(
  source: ExtraKeySource,
  start: number,
  end: number,
): EngineExtraKey[] | null {
  const salted = start === 0 && source.cacheSalt
  if (!source.loraName && !salted && source.multimodal.length === 0) return null
  const keys: EngineExtraKey[] = []
  if (source.loraName) keys.push({ kind: 'lora', name: source.loraName })
  for (const feature of source.multimodal) {
    if (end <= feature.offset) break
    if (start >= feature.offset + feature.length) continue
    keys.push({
      kind: 'mm',
      identifier: feature.identifier,
      offset: feature.offset - start,
      modality: feature.modality ?? 'image',
    })
  }
  if (salted) keys.push({ kind: 'cache_salt', salt: source.cacheSalt as string })
  return keys.length > 0 ? keys : null
}

/**
 * Multimodal placeholders must lie in the prompt, in order and apart, as vLLM's input
 * processor makes them (`_gen_mm_extra_hash_keys` assumes sorted features).
 */
export function checkMultimodal(
  features: readonly MultimodalFeature[],
  promptLength: number,
): void {
  let end = 0
  features.forEach((feature, i) => {
    const { identifier, offset, length } = feature
    const where = `multimodal[${i}]`
    if (typeof identifier !== 'string' || identifier.length === 0) {
      throw new KinfError('invalid_request', `${where}: identifier must be a non-empty string`)
    }
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || length < 1) {
      throw new KinfError(
        'invalid_request',
        `${where}: offset and length must be integers, length ≥ 1`,
      )
    }
    if (offset < end || offset + length > promptLength) {
      throw new KinfError(
        'invalid_request',
        `${where}: tokens [${offset}, ${offset + length}) overlap the previous input or leave the ${promptLength}-token prompt`,
      )
    }
    end = offset + length
  })
}
