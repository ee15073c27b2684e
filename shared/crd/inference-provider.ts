import { z } from 'zod'
import { CommonStatus } from './condition.ts'
import { ModelName } from './inference-pool.ts'
import { namedList } from './named-list.ts'
import { ResourceName } from './object-meta.ts'

export const ProviderModel = z.strictObject({
  name: ModelName.describe('Name GatewayBackends use for this model.'),
  modelId: z
    .string()
    .min(1)
    .max(2_048)
    .describe('Provider model or inference-profile ID, e.g. us.anthropic.claude-sonnet-4-v1:0.'),
  maxOutputTokens: z
    .int()
    .positive()
    .optional()
    .describe('Cap on max_tokens sent to the provider.'),
  pricing: z
    .strictObject({
      inputPerMillionTokens: z.number().min(0).describe('USD per million input tokens.'),
      outputPerMillionTokens: z.number().min(0).describe('USD per million output tokens.'),
    })
    .optional()
    .describe('Price per token, for cost accounting and cost-aware rules.'),
})
export type ProviderModel = z.infer<typeof ProviderModel>

export const BedrockConfig = z.strictObject({
  region: z
    .string()
    .regex(/^[a-z]{2}(-gov)?-[a-z]+-\d+$/, 'must be an AWS region such as us-east-1')
    .describe('AWS region of the Bedrock Runtime endpoint.'),
  endpoint: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe('Endpoint override: a VPC endpoint, or a Bedrock-compatible server for testing.'),
  credentials: z
    .strictObject({
      source: z
        .enum(['Environment', 'SecretRef', 'WebIdentity'])
        .default('Environment')
        .describe(
          'Environment: the default AWS chain. SecretRef: a Secret with access keys. WebIdentity: IRSA.',
        ),
      secretRef: z
        .strictObject({
          name: ResourceName.describe('Secret in the same namespace.'),
          accessKeyIdKey: z
            .string()
            .min(1)
            .default('AWS_ACCESS_KEY_ID')
            .describe('Key of the Secret holding the access key id.'),
          secretAccessKeyKey: z
            .string()
            .min(1)
            .default('AWS_SECRET_ACCESS_KEY')
            .describe('Key of the Secret holding the secret access key.'),
        })
        .optional()
        .describe('The Secret holding access keys, when source is SecretRef.'),
    })
    .prefault({})
    .superRefine((credentials, ctx) => {
      if ((credentials.source === 'SecretRef') !== (credentials.secretRef !== undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['secretRef'],
          message: 'secretRef is required when, and only when, source is SecretRef',
        })
      }
    })
    .meta({
      'x-kubernetes-validations': [
        {
          rule: "(self.source == 'SecretRef') == has(self.secretRef)",
          message: 'secretRef is required when, and only when, source is SecretRef',
        },
      ],
    })
    .describe('Where the AWS credentials come from.'),
})
export type BedrockConfig = z.infer<typeof BedrockConfig>

export const InferenceProviderSpec = z
  .strictObject({
    type: z.enum(['Bedrock']).describe('The kind of provider. Only AWS Bedrock for now.'),
    bedrock: BedrockConfig.optional().describe('Settings when type is Bedrock.'),
    models: namedList(ProviderModel, { min: 1, max: 64 }).describe('Models offered, by name.'),
    limits: z
      .strictObject({
        requestsPerMinute: z.int().positive().optional().describe('Requests per minute allowed.'),
        tokensPerMinute: z
          .int()
          .positive()
          .optional()
          .describe('Input plus output tokens per minute.'),
        maxConcurrentRequests: z
          .int()
          .positive()
          .optional()
          .describe('Requests in flight at once.'),
      })
      .optional()
      .describe('Account limits to stay under; bursting stops when they are reached.'),
    timeoutMs: z.int().min(100).max(600_000).default(60_000).describe('Per-request timeout.'),
  })
  .superRefine((spec, ctx) => {
    if (spec.type === 'Bedrock' && spec.bedrock === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['bedrock'],
        message: 'bedrock is required when type is Bedrock',
      })
    }
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: "self.type != 'Bedrock' || has(self.bedrock)",
        message: 'bedrock is required when type is Bedrock',
      },
    ],
  })
export type InferenceProviderSpec = z.infer<typeof InferenceProviderSpec>

export const InferenceProviderStatus = CommonStatus
export type InferenceProviderStatus = z.infer<typeof InferenceProviderStatus>
