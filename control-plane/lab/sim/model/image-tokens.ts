import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { tokenText } from './create-sim-tokenizer.ts'
import type { ModelFiles } from './load-model-files.ts'
import type { ImageItem } from './parse-chat-messages.ts'

/** How a multimodal model's prompt holds an image. */
export interface ImageTokens {
  /** What the prompt text has for an image before processing (`<start_of_image>`). */
  placeholder: string
  /** What the processor puts in its place: the image's soft tokens between their markers. */
  sequence: string
  /** Tokens of the sequence on its own: the length of the image's placeholder range. */
  sequenceTokens: number
}

/** An image's placeholder tokens in the prompt (vLLM's mm_features), for the block hashes. */
export interface ImageFeature {
  /** The image's identity: the client's uuid, else the SHA-256 of its URL (data: URLs included). */
  identifier: string
  /** First token of the image's range in the prompt. */
  offset: number
  length: number
  modality: 'image'
}

/**
 * Gemma 3's image prompt (Gemma3Processor, and vLLM's gemma3_mm.py): each
 * `<start_of_image>` becomes "\n\n<start_of_image>" + image_seq_length soft tokens +
 * "<end_of_image>\n\n". A model whose tokenizer_config names no boi, eoi and image tokens
 * is text-only here (null). `tokensPerImage` overrides processor_config's image_seq_length.
 */
export function imageTokensOf(
  files: ModelFiles,
  encode: (text: string) => number[],
  tokensPerImage?: number,
): ImageTokens | null {
  const config = files.tokenizerConfig
  const boi = tokenText(config.boi_token)
  const eoi = tokenText(config.eoi_token)
  const image = tokenText(config.image_token)
  if (boi === null || eoi === null || image === null) return null
  const count = tokensPerImage ?? processorImageLength(files) ?? 256
  if (!Number.isInteger(count) || count < 1)
    throw new KinfError(
      'invalid_config',
      `tokens per image must be a positive integer, not ${count}`,
    )
  const sequence = `\n\n${boi}${image.repeat(count)}${eoi}\n\n`
  return { placeholder: boi, sequence, sequenceTokens: encode(sequence).length }
}

function processorImageLength(files: ModelFiles): number | null {
  for (const name of ['processor_config.json', 'preprocessor_config.json']) {
    const path = join(files.dir, name)
    if (!existsSync(path)) continue
    const length = (JSON.parse(readFileSync(path, 'utf8')) as { image_seq_length?: unknown })
      .image_seq_length
    if (typeof length === 'number') return length
  }
  return null
}

/**
 * The prompt's token ids with each image's placeholder expanded, as the processor expands
 * the text before tokenizing it, and each image's range: from the token holding the
 * sequence's leading "\n\n" (merged with a newline before it, as vLLM's Gemma 3 processor
 * finds it) for the sequence's own length.
 */
export function expandImages(
  text: string,
  images: readonly ImageItem[],
  tokens: ImageTokens,
  encode: (text: string) => number[],
  placeholderId: number,
): { ids: number[]; features: ImageFeature[] } {
  const pieces = text.split(tokens.placeholder)
  if (pieces.length - 1 !== images.length)
    throw new KinfError(
      'invalid_request',
      `Expected there to be ${images.length} prompt updates corresponding to ${images.length} image items, but instead found ${pieces.length - 1} prompt updates! This is likely because you forgot to include input placeholder tokens (e.g., \`<image>\`, \`<|image_pad|>\`) in the prompt. If the model has a chat template, make sure you have applied it before calling \`LLM.generate\`.`,
      { param: 'messages' },
    )
  const ids = encode(pieces.join(tokens.sequence))
  const features: ImageFeature[] = []
  let from = 0
  for (const image of images) {
    const at = ids.indexOf(placeholderId, from)
    from = at + 1
    features.push({
      identifier:
        image.uuid ??
        createHash('sha256')
          .update(image.url ?? '')
          .digest('hex'),
      offset: Math.max(0, at - 1),
      length: tokens.sequenceTokens,
      modality: 'image',
    })
  }
  return { ids, features }
}
