/**
 * The Worker's tracing: the edge's spans, exported over OTLP/HTTP (protobuf) to the
 * collector its OTEL_* vars name, off unless one is named. The variables are the services'
 * (shared/tracing/otel-env.ts, docs/tracing.md). Nothing is registered globally: the tracer
 * goes into the edge's deps. A Worker has no background timer between requests, so spans
 * are kept by a span collector (span-collector.ts) and each request's waitUntil exports
 * them with fetch once its spans have ended.
 */
import type { Tracer } from '@opentelemetry/api'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import type { ReadableSpan } from '@opentelemetry/sdk-trace'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { Log } from '../../shared/logging/log.ts'
import { type OtlpTracesExport, parseOtelEnv } from '../../shared/tracing/otel-env.ts'
import { createSpanCollector, maxCollectedSpans } from './span-collector.ts'
import { tracerProviderOf } from './tracer-provider-of.ts'

/** The Worker's tracer (undefined when off) and the export each request waits on. */
export interface WorkerTracing {
  tracer: Tracer | undefined
  /** Exports the spans ended once those open now have ended; never rejects (for waitUntil). */
  flush(): Promise<void>
}

export interface WorkerTracingPorts {
  fetch: (input: string, init: RequestInit) => Promise<Response>
  /** The edge's log: a failing export is one warn line until an export succeeds again. */
  log: Log
}

/** service.name unless OTEL_SERVICE_NAME names another, as the Node edge names itself. */
export const workerServiceName = 'kinference-edge'

const tracingOff: WorkerTracing = { tracer: undefined, flush: async () => {} }

/**
 * Tracing as the Worker's vars ask (one per isolate). Throws KinfError('invalid_config')
 * naming the variable when a value cannot be honoured, as the services refuse to start.
 */
export function startWorkerTracing(vars: object, ports: WorkerTracingPorts): WorkerTracing {
  const config = parseOtelEnv(otelVarsOf(vars))
  if (!config.enabled) return tracingOff
  refuseTlsFiles(config)
  const collector = createSpanCollector()
  const provider = tracerProviderOf(config, { serviceName: workerServiceName }, [collector])
  let failing = false
  return {
    tracer: provider.getTracer('kinference'),
    async flush() {
      await collector.openSpansEnded()
      const { spans, dropped } = collector.take()
      if (spans.length === 0 && dropped === 0) return
      try {
        if (spans.length > 0) await exportSpans(spans, config, ports.fetch)
        if (dropped > 0)
          throw new Error(`${dropped} spans were dropped: ${maxCollectedSpans} were held unsent`)
        failing = false
      } catch (error) {
        if (!failing)
          ports.log(
            'the edge could not export its spans; more failures go unlogged until one succeeds',
            {
              level: 'warn',
              error: error instanceof Error ? error.message : String(error),
              spans: spans.length,
            },
          )
        failing = true
      }
    },
  }
}

/** The OTEL_* vars that are strings: the env object also holds the bindings. */
function otelVarsOf(vars: object): Record<string, string> {
  return Object.fromEntries(
    Object.entries(vars).filter(
      (entry): entry is [string, string] =>
        entry[0].startsWith('OTEL_') && typeof entry[1] === 'string',
    ),
  )
}

/** A Worker reads no files, and its fetch takes no CA or client certificate. */
function refuseTlsFiles(config: OtlpTracesExport): void {
  if (Object.keys(config.tls).length > 0)
    throw new KinfError(
      'invalid_config',
      'OTEL_EXPORTER_OTLP_CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY (or their _TRACES_ ' +
        'forms): a Worker cannot read PEM files; unset them and give the collector a ' +
        'publicly trusted certificate',
    )
}

/** One OTLP/HTTP protobuf export request; throws when the collector does not accept it. */
async function exportSpans(
  spans: ReadableSpan[],
  config: OtlpTracesExport,
  fetch: WorkerTracingPorts['fetch'],
): Promise<void> {
  const bytes = ProtobufTraceSerializer.serializeRequest(spans)
  if (!bytes) throw new Error('the spans could not be serialized')
  const gzip = config.compression === 'gzip'
  const response = await fetch(config.url, {
    method: 'POST',
    headers: {
      ...config.headers,
      'content-type': 'application/x-protobuf',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    },
    body: gzip ? await gzipped(bytes) : bytes,
    signal: AbortSignal.timeout(config.timeoutMillis),
  })
  // Read to the end, so workerd does not hold the connection for an unread body.
  await response.arrayBuffer()
  if (!response.ok) throw new Error(`the collector at ${config.url} answered ${response.status}`)
}

async function gzipped(bytes: Uint8Array): Promise<ArrayBuffer> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('gzip'))
  return new Response(stream).arrayBuffer()
}
