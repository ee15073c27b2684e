import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { modelNotFound } from '../../../shared/policy/evaluate-policy.ts'
import { tenantModels } from '../../../shared/policy/tenant-models.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'

/** OpenAI's model object; Kinference knows no creation time, so 0. */
function modelObject(id: string) {
  return { id, object: 'model', created: 0, owned_by: 'kinference' }
}

/** GET /v1/models after authentication: the models the tenant's policy serves it. */
export function listModels(): EdgeStage<'snapshot' | 'identity', never> {
  return edgeStage('listModels', { reads: ['snapshot', 'identity'] }, async (c) =>
    c.json({
      object: 'list',
      data: tenantModels(c.get('snapshot'), c.get('identity').tenant).map(modelObject),
    }),
  )
}

/**
 * GET /v1/models/{id} (the client's models.retrieve): the model when the list has it,
 * else 404 model_not_found in OpenAI's shape.
 */
export function retrieveModel(): EdgeStage<'snapshot' | 'identity', never> {
  return edgeStage('retrieveModel', { reads: ['snapshot', 'identity'] }, async (c) => {
    // Model ids may hold "/" (org/name), so the id is the whole rest of the path.
    const id = decodedId(c.req.path.slice('/v1/models/'.length))
    if (!tenantModels(c.get('snapshot'), c.get('identity').tenant).includes(id))
      throw new KinfError('not_found', modelNotFound(id), {
        param: 'model',
        openAiCode: 'model_not_found',
      })
    return c.json(modelObject(id))
  })
}

/** The path's id decoded; a malformed escape is kept as sent (and so not found). */
function decodedId(raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}
