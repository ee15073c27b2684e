import { KinfError } from '../shared/errors/kinf-error.ts'
import { type BedrockTarget, callBedrock } from './bedrock-upstream.ts'
import type { ExternalPort } from './edge-deps.ts'

export type AwsCredentials = NonNullable<BedrockTarget['credentials']>

/**
 * External providers from their InferenceProvider resources: today AWS Bedrock, through
 * the AWS SDK's Converse API. Credentials come from the runtime: explicit keys on Workers
 * (there is no AWS credential chain there), or the SDK's default chain on Node (IRSA,
 * environment) when `credentials` returns undefined.
 */
export function createExternalProviders(options: {
  credentials: (providerId: string) => AwsCredentials | undefined
}): ExternalPort {
  return {
    complete(provider, model, request, call) {
      const bedrock = provider.spec.bedrock
      if (provider.spec.type !== 'Bedrock' || !bedrock)
        throw new KinfError('internal', `provider ${provider.name}: unsupported type`)
      const offered = provider.spec.models.find((m) => m.name === model)
      if (!offered)
        throw new KinfError('internal', `provider ${provider.name} does not offer ${model}`)
      const credentials = options.credentials(`${provider.namespace}/${provider.name}`)
      const target: BedrockTarget = {
        region: bedrock.region,
        modelId: offered.modelId,
        ...(bedrock.endpoint ? { endpoint: bedrock.endpoint } : {}),
        ...(offered.maxOutputTokens ? { maxOutputTokens: offered.maxOutputTokens } : {}),
        ...(credentials ? { credentials } : {}),
      }
      const timeout = AbortSignal.timeout(provider.spec.timeoutMs)
      return callBedrock(target, request, {
        requestedModel: call.requestedModel,
        signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
      })
    },
  }
}
