/**
 * The spans of a request's stages, at the edge and in the scorer. Each is named
 * `kinference.<stage>` and carries `kinference.stage`; the calls to a pod and to a provider
 * are GenAI client spans instead (named `${operation} ${model}`, gen-ai-attributes.ts),
 * with the stage `pod` or `provider`.
 */
export const stages = [
  'request',
  'auth',
  'read',
  'pii',
  'quota',
  'policy',
  'serve',
  'route',
  'tokenize',
  'index_lookup',
  'hold',
  'pod',
  'provider',
] as const
export type Stage = (typeof stages)[number]

/** The attribute every Kinference span names its stage with. */
export const stageAttribute = 'kinference.stage'

/** The name of a stage's span (a pod's or provider's is named by the GenAI conventions). */
export function stageSpanName(stage: Stage): string {
  return `kinference.${stage}`
}
