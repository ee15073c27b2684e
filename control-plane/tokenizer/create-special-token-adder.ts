import type { TokenizerConfig, TokenizerJson } from './read-tokenizer-files.ts'

type Config = Record<string, unknown> & { type?: unknown }
type Adder = (ids: number[]) => number[]

const tokenText = (value: unknown): string | undefined =>
  typeof value === 'string'
    ? value
    : typeof value === 'object' && value !== null && 'content' in value
      ? String(value.content)
      : undefined

/**
 * What `tokenizers`' post-processor adds to one sequence when add_special_tokens is true
 * (processors/template.rs, bert.rs, sequence.rs): TemplateProcessing's `single` items,
 * Bert's and Roberta's CLS/SEP; ByteLevel adds nothing. Throws for a type it does not know.
 */
function fromPostProcessor(config: Config | null | undefined): Adder {
  if (config === null || config === undefined) return (ids) => ids
  switch (config.type) {
    case 'ByteLevel':
      return (ids) => ids
    case 'Sequence': {
      const steps = (config.processors as Config[]).map(fromPostProcessor)
      return (ids) => steps.reduce((acc, step) => step(acc), ids)
    }
    case 'TemplateProcessing': {
      const specials = config.special_tokens as Record<string, { ids: number[] }>
      const single = config.single as ({ SpecialToken: { id: string } } | { Sequence: unknown })[]
      return (ids) =>
        single.flatMap((item) => {
          if ('Sequence' in item) return ids
          const special = specials[item.SpecialToken.id]
          if (special === undefined) throw new Error(`no special token ${item.SpecialToken.id}`)
          return special.ids
        })
    }
    case 'BertProcessing':
    case 'RobertaProcessing': {
      const [, cls] = config.cls as [string, number]
      const [, sep] = config.sep as [string, number]
      return (ids) => [cls, ...ids, sep]
    }
    default:
      throw new Error(`post_processor: unsupported type ${String(config.type)}`)
  }
}

/** transformers' fast tokenizers that rebuild the post-processor from add_bos_token/add_eos_token. */
const bosEosClasses = new Set(['LlamaTokenizer', 'CodeLlamaTokenizer', 'GemmaTokenizer'])

/**
 * `encode(text, add_special_tokens=True)` as a vLLM pod's transformers tokenizer adds
 * them: tokenizer.json's post-processor, except for the Llama and Gemma classes, whose
 * fast tokenizer replaces it with BOS/EOS per add_bos_token/add_eos_token
 * (`update_post_processor`; add_bos_token defaults to true). Chat prompts never add them
 * (vLLM renders the template and tokenizes with add_special_tokens=False).
 */
export function createSpecialTokenAdder(
  json: TokenizerJson,
  config: TokenizerConfig,
  idOf: (token: string) => number | undefined,
): Adder {
  const tokenizerClass = (config.tokenizer_class ?? '').replace(/Fast$/, '')
  const overridden = config.add_bos_token != null || config.add_eos_token != null
  if (!bosEosClasses.has(tokenizerClass) || !overridden)
    return fromPostProcessor(json.post_processor as Config | null | undefined)
  const bosText = tokenText(config.bos_token)
  const eosText = tokenText(config.eos_token)
  const bos = config.add_bos_token !== false && bosText !== undefined ? idOf(bosText) : undefined
  const eos = config.add_eos_token === true && eosText !== undefined ? idOf(eosText) : undefined
  return (ids) => [...(bos === undefined ? [] : [bos]), ...ids, ...(eos === undefined ? [] : [eos])]
}
