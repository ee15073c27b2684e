/**
 * The OpenTelemetry SDK for one component (the edge, the scorer): a tracer provider that
 * batches spans to an OTLP/HTTP (protobuf) collector, configured from the standard
 * environment variables (shared/tracing/otel-env.ts). Nothing is registered globally: the
 * component passes the returned tracer down (shared/tracing/in-span.ts takes it in a
 * TraceScope).
 */
import { readFileSync } from 'node:fs'
import type { Tracer } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { defaultResource, type Resource, resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import {
  type OtlpTracesExport,
  parseOtelEnv,
  type TraceSamplerChoice,
} from '../../shared/tracing/otel-env.ts'

type ExporterOptions = NonNullable<ConstructorParameters<typeof OTLPTraceExporter>[0]>

/** The instrumentation scope every Kinference span is created under. */
export const instrumentationScopeName = 'kinference'

/** A component's tracing: the tracer to pass down (undefined when off) and its lifecycle. */
export interface RunningTracing {
  tracer: Tracer | undefined
  /** Exports every span ended so far. */
  flush(): Promise<void>
  /** Exports what is left and stops; the tracer's later spans go nowhere. */
  shutdown(): Promise<void>
}

export interface TracingDefaults {
  /** service.name unless OTEL_SERVICE_NAME names another. */
  serviceName: string
  serviceVersion?: string
}

const tracingOff: RunningTracing = {
  tracer: undefined,
  flush: async () => {},
  shutdown: async () => {},
}

/**
 * Starts tracing as the environment asks (off unless an OTLP endpoint variable is set).
 * Throws KinfError('invalid_config') naming the variable when a value cannot be honoured.
 */
export function startTracing(
  env: Record<string, string | undefined>,
  defaults: TracingDefaults,
): RunningTracing {
  const config = parseOtelEnv(env)
  if (!config.enabled) return tracingOff
  const provider = new TracerProvider({
    resource: resourceOf(config, defaults),
    sampler: samplerOf(config.sampler),
    spanProcessors: [new BatchSpanProcessor({ exporter: exporterOf(config) })],
  })
  return {
    tracer: provider.getTracer(instrumentationScopeName, defaults.serviceVersion),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  }
}

/** The component's defaults, then OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME. */
function resourceOf(config: OtlpTracesExport, defaults: TracingDefaults): Resource {
  return defaultResource().merge(
    resourceFromAttributes({
      [ATTR_SERVICE_NAME]: defaults.serviceName,
      ...(defaults.serviceVersion ? { [ATTR_SERVICE_VERSION]: defaults.serviceVersion } : {}),
      ...config.resourceAttributes,
      ...(config.serviceName ? { [ATTR_SERVICE_NAME]: config.serviceName } : {}),
    }),
  )
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

/**
 * Every option passed explicitly, so the exporter's own reading of process.env never
 * decides where spans go. (It still merges OTEL_EXPORTER_OTLP_HEADERS from process.env
 * beneath these headers; the entry points pass process.env, so the two agree.)
 */
function exporterOf(config: OtlpTracesExport): OTLPTraceExporter {
  return new OTLPTraceExporter({
    url: config.url,
    headers: config.headers,
    timeoutMillis: config.timeoutMillis,
    compression: config.compression as ExporterOptions['compression'],
    httpAgentOptions: {
      keepAlive: true,
      ...pemOf('ca', config.tls.certificate, 'OTEL_EXPORTER_OTLP_CERTIFICATE'),
      ...pemOf('cert', config.tls.clientCertificate, 'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE'),
      ...pemOf('key', config.tls.clientKey, 'OTEL_EXPORTER_OTLP_CLIENT_KEY'),
    },
  })
}

/** A TLS file the variables name, read once at start (an unreadable one stops the start). */
function pemOf(option: 'ca' | 'cert' | 'key', path: string | undefined, variable: string) {
  if (path === undefined) return {}
  try {
    return { [option]: readFileSync(path) }
  } catch (error) {
    throw new KinfError(
      'invalid_config',
      `${variable} (or its _TRACES_ form): cannot read '${path}': ${(error as Error).message}`,
      { cause: error },
    )
  }
}
