import type { KinferenceResource } from '../../shared/crd/resource.ts'
import {
  checkTokenizerSource,
  type TokenizerSourceProblem,
} from '../tokenizer/check-tokenizer-source.ts'

export interface PoolTokenizerProblem extends TokenizerSourceProblem {
  path: (string | number)[]
}

/**
 * The problems of a schema-valid resource's tokenizer paths (an InferencePool's
 * `spec.models[].tokenizer`), each at its field: the files checked where kinfctl can read
 * them, a warning where it cannot (see checkTokenizerSource). A path named twice is
 * checked once.
 */
export function checkPoolTokenizers(
  resource: KinferenceResource,
  checked: Map<string, TokenizerSourceProblem[]> = new Map(),
): PoolTokenizerProblem[] {
  if (resource.kind !== 'InferencePool') return []
  return resource.spec.models.flatMap((model, index) => {
    let problems = checked.get(model.tokenizer)
    if (problems === undefined) {
      problems = checkTokenizerSource(model.tokenizer)
      checked.set(model.tokenizer, problems)
    }
    return problems.map((problem) => ({ ...problem, path: ['spec', 'models', index, 'tokenizer'] }))
  })
}
