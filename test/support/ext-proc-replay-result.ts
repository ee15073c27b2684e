/** What a replay of Envoy's messages got back (ext-proc-client.ts), parsed. */
import type { ExtProcReceived } from './ext-proc-call.ts'

/** What a replay got back, in order, and parsed. */
export interface EnvoyReplayResult {
  responses: ExtProcReceived[]
  /** The x-gateway-destination-endpoint header the route set, or null. */
  destination: string | null
  /** `envoy.lb` / x-gateway-destination-endpoint in dynamic_metadata, or null. */
  metadataDestination: string | null
  /** Every header the routing answer set (names as sent). */
  setHeaders: Record<string, string>
  /** The request body as re-emitted in streamed_response chunks. */
  streamedRequestBody: Buffer
  /** Sizes of those chunks, in order, and whether the last ended the stream. */
  streamedRequestChunks: { bytes: number; endOfStream: boolean }[]
  /** The response body as echoed in streamed_response chunks. */
  echoedResponseBody: Buffer
  immediate: { status: number; headers: Record<string, string>; body: string } | null
  grpcError: { code: number; details: string } | null
}

export function summarizeReplay(received: ExtProcReceived[]): EnvoyReplayResult {
  const result: EnvoyReplayResult = {
    responses: received,
    destination: null,
    metadataDestination: null,
    setHeaders: {},
    streamedRequestBody: Buffer.alloc(0),
    streamedRequestChunks: [],
    echoedResponseBody: Buffer.alloc(0),
    immediate: null,
    grpcError: null,
  }
  const requestChunks: Buffer[] = []
  const responseChunks: Buffer[] = []
  for (const item of received) {
    if (item.kind === 'error') result.grpcError = { code: item.code, details: item.details }
    const response = item.response
    if (response === undefined) continue
    const routing = response.request_headers?.response ?? response.request_body?.response
    for (const option of routing?.header_mutation?.set_headers ?? []) {
      const value = option.header.raw_value?.toString() ?? option.header.value ?? ''
      result.setHeaders[option.header.key] = value
      if (option.header.key === 'x-gateway-destination-endpoint') result.destination = value
    }
    const lb = response.dynamic_metadata?.fields?.['envoy.lb']?.structValue?.fields
    const fromMetadata = lb?.['x-gateway-destination-endpoint']?.stringValue
    if (fromMetadata !== undefined) result.metadataDestination = fromMetadata
    const streamed = response.request_body?.response?.body_mutation?.streamed_response
    if (streamed) {
      requestChunks.push(streamed.body ?? Buffer.alloc(0))
      result.streamedRequestChunks.push({
        bytes: streamed.body?.length ?? 0,
        endOfStream: streamed.end_of_stream === true,
      })
    }
    const echoed = response.response_body?.response?.body_mutation?.streamed_response
    if (echoed) responseChunks.push(echoed.body ?? Buffer.alloc(0))
    const immediate = response.immediate_response
    if (immediate) {
      const headers: Record<string, string> = {}
      for (const option of immediate.headers?.set_headers ?? []) {
        headers[option.header.key] =
          option.header.raw_value?.toString() ?? option.header.value ?? ''
      }
      result.immediate = {
        status: immediate.status,
        headers,
        body: immediate.body?.toString() ?? '',
      }
    }
  }
  result.streamedRequestBody = Buffer.concat(requestChunks)
  result.echoedResponseBody = Buffer.concat(responseChunks)
  return result
}
