import { toConverseRequest } from '../../shared/bedrock/to-converse-request.ts'
import type { SnapshotProvider } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { countBedrockTokens, withAnswerSoFar } from './bedrock-count-tokens.ts'
import { type BedrockTarget, bedrockClientFor, callBedrock } from './bedrock-upstream.ts'
import type { ExternalPort } from './edge-deps.ts'

export type AwsCredentials = NonNullable<BedrockTarget['credentials']>

/** A count that takes longer than this is not waited for: the edge charges its estimate. */
const countTimeoutMs = 5_000

/**
 * External providers from their InferenceProvider resources: today AWS Bedrock, through
 * the AWS SDK's Converse API. Credentials come from the runtime: explicit keys on Workers
 * (there is no AWS credential chain there), or the SDK's default chain on Node (IRSA,
 * environment) when `credentials` returns undefined.
 */
export function createExternalProviders(options: {
  credentials: (providerId: string) => AwsCredentials | undefined
}): ExternalPort {
  const targetOf = (provider: SnapshotProvider, model: string): BedrockTarget => {
    const bedrock = provider.spec.bedrock
    if (provider.spec.type !== 'Bedrock' || !bedrock)
      throw new KinfError('internal', `provider ${provider.name}: unsupported type`)
    const offered = provider.spec.models.find((m) => m.name === model)
    if (!offered)
      throw new KinfError('internal', `provider ${provider.name} does not offer ${model}`)
    const credentials = options.credentials(`${provider.namespace}/${provider.name}`)
    return {
      region: bedrock.region,
      modelId: offered.modelId,
      ...(bedrock.endpoint ? { endpoint: bedrock.endpoint } : {}),
      ...(offered.maxOutputTokens ? { maxOutputTokens: offered.maxOutputTokens } : {}),
      ...(credentials ? { credentials } : {}),
    }
  }
  return {
    complete(provider, model, request, call) {
      const target = targetOf(provider, model)
      const timeout = AbortSignal.timeout(provider.spec.timeoutMs)
      return callBedrock(target, request, {
        requestedModel: call.requestedModel,
        signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
      })
    },
    async countTokens(provider, model, request, answerSoFar) {
      try {
        const target = targetOf(provider, model)
        const converse = withAnswerSoFar(toConverseRequest(request, target), answerSoFar)
        return await countBedrockTokens(
          bedrockClientFor(target),
          target.modelId,
          converse,
          AbortSignal.timeout(countTimeoutMs),
        )
      } catch {
        return null
      }
    },
  }
}
