import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { ChatImage } from './parse-chat-messages.ts'

/**
 * An image's placeholder tokens in the prompt, as vLLM's engine gets them (a request's
 * mm_features): the blocks that hold them are hashed with the image's identifier.
 */
export interface MmFeature {
  /** The content part's `uuid`, which vLLM takes as the image's identifier when given. */
  identifier: string
  /** First token of the image's placeholder range. */
  offset: number
  /** Tokens of the range: the processor's whole replacement for the image. */
  length: number
}

/** A multimodal model's image prompt: a placeholder in the text, expanded before tokenizing. */
export interface ImageExpander {
  /** What the rendered chat has for an image (Gemma 3's `<start_of_image>`). */
  placeholder: string
  /**
   * The ids of a rendered chat whose placeholders are expanded, one per image in order,
   * and the ranges of the images that have an identifier.
   */
  expand(
    text: string,
    images: readonly ChatImage[],
    encode: (text: string) => number[],
  ): { tokenIds: number[]; mmFeatures: MmFeature[] }
}

export interface ImageTokenNames {
  boi: string | null
  eoi: string | null
  image: string | null
}

/** processor_config.json's default for Gemma 3 (Gemma3Processor's image_seq_length). */
const defaultImageSeqLength = 256

/**
 * Gemma 3's image prompt (Gemma3Processor, which vLLM's gemma3_mm.py applies): each
 * `<start_of_image>` (tokenizer_config's boi_token) of the rendered chat becomes
 * "\n\n" + boi + image_seq_length soft tokens (image_token) + eoi + "\n\n", and the text
 * is tokenized whole. The image's range starts at the token holding that leading "\n\n"
 * (merged with the newlines before it, which vLLM's Gemma 3 processor looks inside) and is
 * as long as the replacement tokenized alone. A tokenizer whose config names no boi, eoi
 * and image tokens takes no images (null).
 *
 * Only images with the client's `uuid` get a feature: without one, vLLM identifies the
 * image by a hash of its decoded pixels, which the router cannot compute, so the blocks
 * holding such an image are left without it and never match a pod's.
 */
export function createImageExpander(
  names: ImageTokenNames,
  imageSeqLength: number | null,
  encode: (text: string) => number[],
  idOf: (token: string) => number | undefined,
): ImageExpander | null {
  const { boi, eoi, image } = names
  if (boi === null || eoi === null || image === null) return null
  const boiId = idOf(boi)
  if (boiId === undefined) throw new Error(`boi_token ${boi} is not in the vocabulary`)
  const count = imageSeqLength ?? defaultImageSeqLength
  const replacement = `\n\n${boi}${image.repeat(count)}${eoi}\n\n`
  const length = encode(replacement).length
  return {
    placeholder: boi,
    expand: (text, images, encodeText) => {
      const pieces = text.split(boi)
      if (pieces.length - 1 !== images.length)
        throw new KinfError(
          'invalid_request',
          `Expected there to be ${images.length} prompt updates corresponding to ${images.length} image items, but instead found ${pieces.length - 1} prompt updates!`,
          { param: 'messages' },
        )
      const tokenIds = encodeText(pieces.join(replacement))
      const mmFeatures: MmFeature[] = []
      let from = 0
      for (const { uuid } of images) {
        const at = tokenIds.indexOf(boiId, from)
        from = at + 1
        if (uuid !== null)
          mmFeatures.push({ identifier: uuid, offset: Math.max(0, at - 1), length })
      }
      return { tokenIds, mmFeatures }
    },
  }
}
