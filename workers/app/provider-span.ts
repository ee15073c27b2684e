import { type Span, SpanKind } from '@opentelemetry/api'
import type { SnapshotProvider } from '../../shared/config/config-snapshot.ts'
import {
  genAiProviders,
  genAiRequestAttributes,
  genAiUsageAttributes,
} from '../../shared/tracing/gen-ai-attributes.ts'
import { failSpan, type TraceScope } from '../../shared/tracing/in-span.ts'
import { stageAttribute } from '../../shared/tracing/stage-spans.ts'
import type { EdgeRequest } from './read-edge-request.ts'
import type { UpstreamOutcome } from './request-charge.ts'

/** An attempt's span on a provider: ended with how its answer ended. */
export interface ProviderSpan {
  failed(error: unknown): void
  ended(outcome: UpstreamOutcome): void
}

const untraced: ProviderSpan = { failed: () => undefined, ended: () => undefined }

/**
 * A call to an external provider as a GenAI client span, named `${operation} ${model}` by
 * the conventions (the provider's model id), with the stage `provider`. It lasts until the
 * answer ends, a stream included, and carries the tokens the answer reported.
 */
export function startProviderSpan(
  scope: TraceScope | undefined,
  request: EdgeRequest,
  attempt: { providerId: string; provider: SnapshotProvider; model: string },
): ProviderSpan {
  if (!scope) return untraced
  const operation = request.kind === 'chat' ? 'chat' : 'text_completion'
  const span = scope.tracer.startSpan(
    `${operation} ${attempt.model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [stageAttribute]: 'provider',
        'gen_ai.provider.name':
          attempt.provider.spec.type === 'Bedrock'
            ? genAiProviders.bedrock
            : attempt.provider.spec.type,
        ...genAiRequestAttributes({
          operation,
          model: attempt.model,
          maxTokens: request.maxTokens,
          stream: request.stream,
          choices: request.sequences,
        }),
        'kinference.provider': attempt.providerId,
        ...(attempt.provider.spec.bedrock && {
          'cloud.region': attempt.provider.spec.bedrock.region,
        }),
      },
    },
    scope.parent,
  )
  // Ended once: a failed call is metered as refused after it has failed.
  let open = true
  const finish = (write: () => void) => {
    if (!open) return
    open = false
    write()
    span.end()
  }
  return {
    failed: (error) => finish(() => failSpan(span, error)),
    ended: (outcome) => finish(() => describeEnd(span, outcome)),
  }
}

function describeEnd(span: Span, outcome: UpstreamOutcome): void {
  const usage =
    outcome.kind === 'answered'
      ? outcome.usage
      : outcome.kind === 'cut'
        ? (outcome.metered?.usage ?? null)
        : null
  if (usage)
    span.setAttributes(
      genAiUsageAttributes({
        inputTokens: usage.prompt_tokens ?? 0,
        outputTokens: usage.completion_tokens ?? 0,
        cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? null,
      }),
    )
  span.setAttribute('kinference.answer', outcome.kind)
  if (outcome.kind === 'refused') failSpan(span, new Error('the provider refused the request'))
}
