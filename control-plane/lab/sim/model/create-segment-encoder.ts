import type { Tokenizer as HfTokenizer } from '@huggingface/tokenizers'
import type { ModelFiles } from './load-model-files.ts'
import { createAddedTokenSplitter } from './split-at-added-tokens.ts'

export interface SegmentCacheStats {
  hits: number
  misses: number
  entries: number
  chars: number
}

/** Before each space that has a letter on both sides. */
const wordStart = /(?<=\p{L})(?= \p{L})/u

/**
 * Text whose ids cut anywhere this encoder cuts equal the whole text's: checked when a
 * tokenizer is loaded, so a pre-tokenizer that does not split words at spaces is found.
 */
const sample =
  "Hello world, it's a TEST of the tokenizer's words. Éléphant naïve café e\u0301t\u00e9 東京 タワー 你好 world 1234 x-y z_w. The quick  brown\tfox jumps!\nNew line  and   spaces Ωmega ǅemal İstanbul straße ﬁne."

/**
 * Tokenizes text piece by piece, keeping the ids of recent pieces: the runs between added
 * tokens (what every Hugging Face tokenizer cuts the text into before anything else), so
 * a conversation's earlier turns cost a lookup; and, for a GPT-style pre-tokenizer (regex
 * splits, then byte-level BPE), the words of a run, since such a tokenizer never joins a
 * letter, a space and a letter into one piece and BPE never merges across pieces. Where a
 * result depends on more than the piece (an added token that strips its neighbours, a
 * Metaspace prefix on the first section only) the whole text is tokenized.
 */
export function createSegmentEncoder(files: ModelFiles, hf: HfTokenizer, maxChars: number) {
  const raw = (text: string) => hf.encode(text, { add_special_tokens: false }).ids
  const json = files.tokenizerJson
  const hasNormalizer = json.normalizer !== null && json.normalizer !== undefined
  const added = (json.added_tokens ?? []) as {
    id: number
    content: string
    normalized?: boolean
    lstrip?: boolean
    rstrip?: boolean
  }[]
  const unnormalized = added.filter((token) => !(token.normalized && hasNormalizer))
  const cacheable =
    maxChars > 0 &&
    !unnormalized.some((token) => token.lstrip || token.rstrip) &&
    !JSON.stringify([json.normalizer, json.pre_tokenizer]).includes('"prepend_scheme":"first"')
  const split = createAddedTokenSplitter(unnormalized.map((token) => token.content))
  const addedIds = new Map(unnormalized.map((token) => [token.content, token.id]))
  // Two generations instead of an exact LRU: a hit costs one or two lookups, no reordering;
  // when the young one holds half the budget, it becomes the old one and the old is dropped.
  let young = new Map<string, readonly number[]>()
  let old = new Map<string, readonly number[]>()
  let youngChars = 0
  let oldChars = 0
  let hits = 0
  let misses = 0
  const remember = (text: string, ids: readonly number[]) => {
    if (text.length * 2 > maxChars) return
    if ((youngChars + text.length) * 2 > maxChars) {
      old = young
      oldChars = youngChars
      young = new Map()
      youngChars = 0
    }
    young.set(text, ids)
    youngChars += text.length
  }
  const cached = (text: string, encode: (text: string) => number[]): readonly number[] => {
    const known = young.get(text)
    if (known !== undefined) {
      hits++
      return known
    }
    const older = old.get(text)
    if (older !== undefined) {
      hits++
      remember(text, older)
      return older
    }
    misses++
    const ids = encode(text)
    remember(text, ids)
    return ids
  }
  const byWords = (text: string): number[] => {
    const ids: number[] = []
    for (const word of text.split(wordStart)) for (const id of cached(word, raw)) ids.push(id)
    return ids
  }
  const words = splitsWords(json) && sameIds(raw(sample), byWords(sample))
  const encodeRun = words ? byWords : raw
  young = new Map()
  old = new Map()
  youngChars = 0
  oldChars = 0
  hits = 0
  misses = 0
  return {
    encode(text: string): number[] {
      if (!cacheable) return raw(text)
      const ids: number[] = []
      for (const segment of split(text)) {
        const id = segment.added ? addedIds.get(segment.text) : undefined
        if (id !== undefined) ids.push(id)
        else for (const runId of cached(segment.text, encodeRun)) ids.push(runId)
      }
      return ids
    },
    /** Whether runs are cut into words too (a GPT-style pre-tokenizer). */
    byWords: words,
    stats: (): SegmentCacheStats => ({
      hits,
      misses,
      entries: young.size + old.size,
      chars: youngChars + oldChars,
    }),
  }
}

/**
 * A normalizer that cannot join across a space (none, NFC), then regex splits whose
 * pieces, in GPT-style patterns, break before a space that precedes a letter, then
 * byte-level BPE without a prefix space.
 */
function splitsWords(json: Record<string, unknown>): boolean {
  const normalizer = json.normalizer as { type?: string; normalizers?: unknown[] } | null
  const plainNormalizer =
    normalizer === null ||
    normalizer === undefined ||
    normalizer.type === 'NFC' ||
    (normalizer.type === 'Sequence' && normalizer.normalizers?.length === 0)
  const pre = json.pre_tokenizer as Record<string, unknown> | null
  const steps = (pre?.type === 'Sequence' ? (pre.pretokenizers ?? []) : [pre]) as (Record<
    string,
    unknown
  > | null)[]
  const last = steps.at(-1)
  const byteLevel =
    last?.type === 'ByteLevel' &&
    last.add_prefix_space === false &&
    (steps.length > 1 ? last.use_regex === false : last.use_regex === true)
  const splits = steps
    .slice(0, -1)
    .every(
      (step) => step?.type === 'Split' && step.behavior === 'Isolated' && step.invert === false,
    )
  return plainNormalizer && byteLevel && splits
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i])
}
