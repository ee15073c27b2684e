import { z } from 'zod'
import { ModelName } from '../../crd/inference-pool.ts'
import { matchNameList, nameListCovers } from './name-list.ts'
import { requestCondition } from './policy-condition.ts'

/** `match.models`: the requested model, after any earlier rule's rewrite, is one of these. */
export const modelsCondition = requestCondition({
  key: 'models',
  schema: z
    .array(ModelName)
    .min(1)
    .max(64)
    .optional()
    .describe('Requested model names; all when omitted.'),
  match: (models, subject) => matchNameList('model', subject.model, models),
  covers: nameListCovers,
})
