import type { TestProject } from 'vitest/node'
import { startLocalHttpServer } from './local-http-server.ts'
import { startOtlpCollector } from './otlp-collector.ts'

/** The test OTLP collector as a workerd test reaches it: plain data, over a binding. */
export interface WorkerdOtlpCollector {
  /** The collector's base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string
  /**
   * GET: every export request the collector accepted so far, as JSON (its headers, content
   * type and decoded spans, nanoseconds as strings): a workerd test cannot call into Node.
   */
  receivedUrl: string
}

declare module 'vitest' {
  export interface ProvidedContext {
    otlpCollector: WorkerdOtlpCollector
  }
}

/** The workers project's global setup: a real OTLP collector in Node, for the Worker's spans. */
export default async function setup(project: TestProject) {
  const collector = await startOtlpCollector()
  const received = await startLocalHttpServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(
      JSON.stringify(collector.requests(), (_key, value) =>
        typeof value === 'bigint' ? String(value) : value,
      ),
    )
  })
  project.provide('otlpCollector', { url: collector.url, receivedUrl: received.url })
  return async () => {
    await received.close()
    await collector.close()
  }
}
