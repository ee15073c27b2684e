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
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { type OtlpTracesExport, parseOtelEnv } from '../../shared/tracing/otel-env.ts'

import { type TracedService, tracerProviderOf } from '../../workers/worker/tracer-provider-of.ts'

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
  defaults: TracedService,
): RunningTracing {
  const config = parseOtelEnv(env)
  if (!config.enabled) return tracingOff
  const provider = tracerProviderOf(config, defaults, [
    new BatchSpanProcessor({ exporter: exporterOf(config) }),
  ])
  return {
    tracer: provider.getTracer(instrumentationScopeName, defaults.serviceVersion),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
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
