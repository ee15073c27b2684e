import { validRequestId } from '../openai/request-id.ts'

/**
 * The client's request headers that travel upstream as sent, at every hop: edge → scorer
 * (workers/app/stages/tag-request.ts), scorer → pod (control-plane/scorer/serving/
 * handle-inference.ts and handle-route.ts). The edge passing accept on changes nothing a
 * pod answers; one list keeps the hops from drifting apart.
 */
export const passThroughHeaderNames = ['traceparent', 'tracestate', 'accept'] as const

/** Trace context and accept as they are meant to be: short printable text. */
const plainHeaderValue = /^[\x20-\x7e]{0,512}$/

/**
 * The headers an upstream gets: those above as the client sent them, when they are short
 * printable text (a pod answers a bare 431 to headers past about 16 KiB), and an
 * x-request-id always: the client's when it is a request id (validRequestId), else `ownId`.
 */
export function passThroughHeaders(
  header: (name: string) => string | null | undefined,
  ownId: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    'x-request-id': validRequestId(header('x-request-id')) ?? ownId,
  }
  for (const name of passThroughHeaderNames) {
    const value = header(name)
    if (typeof value === 'string' && plainHeaderValue.test(value)) headers[name] = value
  }
  return headers
}
