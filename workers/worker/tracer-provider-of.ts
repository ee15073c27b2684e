import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  type Sampler,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import type { OtlpTracesExport, TraceSamplerChoice } from '../../shared/tracing/otel-env.ts'

/** What a service calls itself when OTEL_SERVICE_NAME does not say. */
export interface TracedService {
  serviceName: string
  serviceVersion?: string
}

/**
 * The SDK's tracer provider as OTEL_* configured it, for the Worker and the Node services
 * alike (control-plane/tracing/start-tracing.ts): the resource (the service's defaults,
 * then OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME) and the sampler, with the runtime's
 * own span processors (how each exports). Registered nowhere: callers pass its tracers on.
 */
export function tracerProviderOf(
  config: OtlpTracesExport,
  service: TracedService,
  spanProcessors: SpanProcessor[],
): TracerProvider {
  return new TracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({
        'service.name': service.serviceName,
        ...(service.serviceVersion ? { 'service.version': service.serviceVersion } : {}),
        ...config.resourceAttributes,
        ...(config.serviceName ? { 'service.name': config.serviceName } : {}),
      }),
    ),
    sampler: samplerOf(config.sampler),
    spanProcessors,
  })
}

function samplerOf(choice: TraceSamplerChoice): Sampler {
  const ratio = new TraceIdRatioBasedSampler(choice.ratio)
  switch (choice.name) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return ratio
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio })
  }
}
