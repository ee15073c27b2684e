import { z } from 'zod'
import { apiVersion } from './api-group.ts'
import { GatewayBackendSpec, GatewayBackendStatus } from './gateway-backend.ts'
import { InferencePolicySpec, InferencePolicyStatus } from './inference-policy.ts'
import { InferencePoolSpec, InferencePoolStatus } from './inference-pool.ts'
import { InferenceProviderSpec, InferenceProviderStatus } from './inference-provider.ts'
import { InferenceWorkerSetSpec, InferenceWorkerSetStatus } from './inference-worker-set.ts'
import { ObjectMeta } from './object-meta.ts'

/** The envelope every Kinference resource shares. */
function resource<Kind extends string, Spec extends z.ZodType, Status extends z.ZodType>(
  kind: Kind,
  spec: Spec,
  status: Status,
) {
  return z.strictObject({
    apiVersion: z.literal(apiVersion),
    kind: z.literal(kind),
    metadata: ObjectMeta,
    spec,
    status: status.optional(),
  })
}

export const InferencePool = resource('InferencePool', InferencePoolSpec, InferencePoolStatus)
export type InferencePool = z.infer<typeof InferencePool>
export const InferenceWorkerSet = resource(
  'InferenceWorkerSet',
  InferenceWorkerSetSpec,
  InferenceWorkerSetStatus,
)
export type InferenceWorkerSet = z.infer<typeof InferenceWorkerSet>
export const InferenceProvider = resource(
  'InferenceProvider',
  InferenceProviderSpec,
  InferenceProviderStatus,
)
export type InferenceProvider = z.infer<typeof InferenceProvider>
export const GatewayBackend = resource('GatewayBackend', GatewayBackendSpec, GatewayBackendStatus)
export type GatewayBackend = z.infer<typeof GatewayBackend>
export const InferencePolicy = resource(
  'InferencePolicy',
  InferencePolicySpec,
  InferencePolicyStatus,
)
export type InferencePolicy = z.infer<typeof InferencePolicy>

export const KinferenceResource = z.discriminatedUnion('kind', [
  InferencePool,
  InferenceWorkerSet,
  InferenceProvider,
  GatewayBackend,
  InferencePolicy,
])
export type KinferenceResource = z.infer<typeof KinferenceResource>
export type ResourceKind = KinferenceResource['kind']

export interface PrinterColumn {
  name: string
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date'
  jsonPath: string
  description?: string
  priority?: number
}

export interface KindDefinition {
  schema: z.ZodType
  plural: string
  shortNames: string[]
  description: string
  printerColumns: PrinterColumn[]
}

const ready: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
}
const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }

/** What the CRD generator and the validator need to know about each kind. */
export const kindDefinitions: Record<ResourceKind, KindDefinition> = {
  InferencePool: {
    schema: InferencePool,
    plural: 'inferencepools',
    shortNames: ['kpool'],
    description:
      'A set of vLLM pods serving the same models, and how requests are routed among them.',
    printerColumns: [
      { name: 'Strategy', type: 'string', jsonPath: '.spec.routing.strategy' },
      { name: 'Profile', type: 'string', jsonPath: '.spec.gpuProfile' },
      { name: 'Ready Pods', type: 'integer', jsonPath: '.status.readyPods' },
      { name: 'Saturation', type: 'number', jsonPath: '.status.saturation', priority: 1 },
      ready,
      age,
    ],
  },
  InferenceWorkerSet: {
    schema: InferenceWorkerSet,
    plural: 'inferenceworkersets',
    shortNames: ['kws'],
    description: 'A group of workers inside a pool with their own hardware, adapters and cost.',
    printerColumns: [
      { name: 'Pool', type: 'string', jsonPath: '.spec.poolRef.name' },
      { name: 'GPU', type: 'string', jsonPath: '.spec.gpu.type' },
      { name: 'Ready Pods', type: 'integer', jsonPath: '.status.readyPods' },
      ready,
      age,
    ],
  },
  InferenceProvider: {
    schema: InferenceProvider,
    plural: 'inferenceproviders',
    shortNames: ['kprov'],
    description: 'An external inference provider such as AWS Bedrock.',
    printerColumns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Region', type: 'string', jsonPath: '.spec.bedrock.region' },
      ready,
      age,
    ],
  },
  GatewayBackend: {
    schema: GatewayBackend,
    plural: 'gatewaybackends',
    shortNames: ['kbe'],
    description: 'A named routing target for policies: a model on a pool or on a provider.',
    printerColumns: [
      { name: 'Pool', type: 'string', jsonPath: '.spec.target.pool.name' },
      { name: 'Provider', type: 'string', jsonPath: '.spec.target.provider.name' },
      { name: 'Cost', type: 'number', jsonPath: '.spec.relativeCost' },
      ready,
      age,
    ],
  },
  InferencePolicy: {
    schema: InferencePolicy,
    plural: 'inferencepolicies',
    shortNames: ['kpol'],
    description:
      'Tenants, their quotas and keys, and the ordered rules that decide where requests go.',
    printerColumns: [
      { name: 'Tenants', type: 'integer', jsonPath: '.status.tenants' },
      { name: 'Rules', type: 'integer', jsonPath: '.status.rules' },
      ready,
      age,
    ],
  },
}

export const resourceKinds = Object.keys(kindDefinitions) as ResourceKind[]

export function isResourceKind(kind: unknown): kind is ResourceKind {
  return typeof kind === 'string' && Object.hasOwn(kindDefinitions, kind)
}
