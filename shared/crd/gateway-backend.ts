import { z } from 'zod'
import { CommonStatus } from './condition.ts'
import { ModelName } from './inference-pool.ts'
import { exactlyOneOf } from './named-list.ts'
import { ResourceName } from './object-meta.ts'

const ModelOn = (what: string) =>
  z.strictObject({
    name: ResourceName.describe(`The ${what}, in the same namespace.`),
    model: ModelName.describe(`A model the ${what} serves.`),
  })

export const Locality = z
  .enum(['InCluster', 'External'])
  .describe('InCluster: served by pods of this cluster. External: leaves the cluster (a provider).')
export type Locality = z.infer<typeof Locality>

export const GatewayBackendSpec = z
  .strictObject({
    target: exactlyOneOf({
      pool: ModelOn('InferencePool').optional().describe('A model served by an InferencePool.'),
      provider: ModelOn('InferenceProvider')
        .optional()
        .describe('A model offered by an InferenceProvider.'),
    }).describe('Where requests sent to this backend go: a model on a pool or on a provider.'),
    locality: Locality.optional().describe(
      'InCluster for a pool target, External for a provider target. May be omitted; when given it must agree, so a reviewer sees it.',
    ),
    workerSets: z
      .array(ResourceName)
      .max(32)
      .optional()
      .describe('Restrict a pool target to these InferenceWorkerSets.'),
    relativeCost: z
      .number()
      .min(0)
      .default(1)
      .describe('Cost of a token here relative to other backends; preferCheaper picks by it.'),
  })
  .superRefine((spec, ctx) => {
    const derived = spec.target.pool ? 'InCluster' : 'External'
    if (spec.locality !== undefined && spec.locality !== derived) {
      ctx.addIssue({
        code: 'custom',
        path: ['locality'],
        message: `locality ${spec.locality} contradicts the target, which is ${derived}`,
      })
    }
    if (spec.workerSets !== undefined && !spec.target.pool) {
      ctx.addIssue({
        code: 'custom',
        path: ['workerSets'],
        message: 'workerSets needs a pool target',
      })
    }
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: "!has(self.locality) || (self.locality == 'InCluster') == has(self.target.pool)",
        message: 'locality must agree with the target',
      },
      {
        rule: '!has(self.workerSets) || has(self.target.pool)',
        message: 'workerSets needs a pool target',
      },
    ],
  })
export type GatewayBackendSpec = z.infer<typeof GatewayBackendSpec>

/** Locality follows from the target; the field only restates it. */
export function backendLocality(spec: GatewayBackendSpec): Locality {
  return spec.target.pool ? 'InCluster' : 'External'
}

export const GatewayBackendStatus = CommonStatus
export type GatewayBackendStatus = z.infer<typeof GatewayBackendStatus>
