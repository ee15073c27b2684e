import { tenantModels } from '../../../shared/policy/tenant-models.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'

/** GET /v1/models after authentication: the models the tenant's policy lets it use. */
export function listModels(): EdgeStage<'snapshot' | 'identity', never> {
  return edgeStage('listModels', { reads: ['snapshot', 'identity'] }, async (c) =>
    c.json({
      object: 'list',
      data: tenantModels(c.get('snapshot'), c.get('identity').tenant).map((id) => ({
        id,
        object: 'model',
        created: 0,
        owned_by: 'kinference',
      })),
    }),
  )
}
