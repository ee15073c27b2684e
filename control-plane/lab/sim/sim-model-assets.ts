import {
  createStableVocabulary,
  type StableVocabulary,
} from '../../../shared/tokens/create-stable-vocabulary.ts'
import { loadSimModel, type SimModel } from './model/create-sim-model.ts'

/** What a simulated pod needs that is expensive to build and can be shared by pods. */
export interface SimModelAssets {
  /** The tokenizer source the pods serve: a built-in name or a Hugging Face model directory. */
  readonly source: string
  /** The pod's own tokenizer and chat rendering (sim/model/), not the router's. */
  readonly tokenizer: SimModel
  readonly vocabulary: StableVocabulary
}

/**
 * Loaded models by source. Loading one takes one to three seconds and gives the same
 * read-only result from the same files, so every pod, test and benchmark of a process
 * shares it rather than each loading its own.
 */
const loaded = new Map<string, SimModelAssets>()

/**
 * A tokenizer source's model and output vocabulary, built once per process and shared by
 * every pod serving it; also what the discrete-event benchmark loads alone. Throws the
 * KinfError of a source that cannot be loaded.
 */
export function loadSimModelAssets(source = 'qwen3'): SimModelAssets {
  const known = loaded.get(source)
  if (known !== undefined) return known
  const model = loadSimModel(source)
  if (!model.ok) throw model.error
  const assets = {
    source,
    tokenizer: model.model,
    vocabulary: createStableVocabulary(model.model),
  }
  loaded.set(source, assets)
  return assets
}
