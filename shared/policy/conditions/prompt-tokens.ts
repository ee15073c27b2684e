import { z } from 'zod'
import { range } from '../../crd/policy-match.ts'
import { matchRange, rangeCovers } from './numeric-range.ts'
import { requestCondition } from './policy-condition.ts'

/** `match.promptTokens`: the prompt's length in tokens is within the range. */
export const promptTokensCondition = requestCondition({
  key: 'promptTokens',
  schema: range('prompt length, in tokens', z.int().min(0)).optional(),
  match: (tokens, subject) => matchRange('promptTokens', subject.promptTokens, tokens),
  covers: rangeCovers,
})
