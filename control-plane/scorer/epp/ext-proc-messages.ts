/**
 * Reading and building envoy.service.ext_proc.v3 messages as proto-loader gives and takes
 * them (ext-proc-protos.ts): fields snake_case as in the .proto, except inside
 * google.protobuf.Struct/Value, which protobufjs names in camelCase (`fields`,
 * `structValue`, `stringValue`, `listValue`); snake-case keys there would be dropped.
 * The keys are those of the Endpoint Picker protocol (docs/ and the GIE proposal 004).
 */
import { KinfError } from '../../../shared/errors/kinf-error.ts'

/** The request header and `envoy.lb` metadata key that carry the picked endpoints. */
export const destinationEndpointKey = 'x-gateway-destination-endpoint'
export const destinationEndpointNamespace = 'envoy.lb'
export const servedEndpointKey = 'x-gateway-destination-endpoint-served'
export const subsetHintNamespace = 'envoy.lb.subset_hint'
export const subsetHintKey = 'x-gateway-destination-endpoint-subset'
/** llm-d's BodyByteLimit: a re-emitted body goes back in chunks of at most this many bytes. */
export const streamedChunkBytes = 62_000

export interface ExtProcValue {
  stringValue?: string
  numberValue?: number
  boolValue?: boolean
  structValue?: ExtProcStruct
  listValue?: { values?: ExtProcValue[] }
}
export interface ExtProcStruct {
  fields?: Record<string, ExtProcValue>
}
export interface ExtProcHeaderValue {
  key?: string
  value?: string
  raw_value?: Buffer
}
export interface ExtProcHeaderMap {
  headers?: ExtProcHeaderValue[]
}
export interface ExtProcMetadata {
  filter_metadata?: Record<string, ExtProcStruct>
}
export interface ExtProcBody {
  body?: Buffer
  end_of_stream?: boolean
}
export interface ExtProcHeaders {
  headers?: ExtProcHeaderMap
  end_of_stream?: boolean
}
/** envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode, by name. */
export type ExtProcBodyMode =
  | 'NONE'
  | 'STREAMED'
  | 'BUFFERED'
  | 'BUFFERED_PARTIAL'
  | 'FULL_DUPLEX_STREAMED'
  | 'GRPC'

/** A ProcessingRequest as proto-loader decodes it (`request` names the oneof's member). */
export interface ExtProcRequest {
  request?: string
  request_headers?: ExtProcHeaders
  response_headers?: ExtProcHeaders
  request_body?: ExtProcBody
  response_body?: ExtProcBody
  request_trailers?: { trailers?: ExtProcHeaderMap }
  response_trailers?: { trailers?: ExtProcHeaderMap }
  metadata_context?: ExtProcMetadata
  protocol_config?: {
    request_body_mode?: ExtProcBodyMode
    response_body_mode?: ExtProcBodyMode
    send_body_without_waiting_for_header_response?: boolean
  }
}

export interface ExtProcHeaderOption {
  header: { key: string; raw_value: Buffer }
  append_action: 'OVERWRITE_IF_EXISTS_OR_ADD'
}
export interface ExtProcCommonResponse {
  status: 'CONTINUE'
  header_mutation?: { set_headers: ExtProcHeaderOption[] }
  body_mutation?: { streamed_response: { body: Buffer; end_of_stream: boolean } }
  clear_route_cache?: boolean
}
/** A ProcessingResponse as proto-loader encodes it. */
export interface ExtProcResponse {
  request_headers?: { response: ExtProcCommonResponse }
  response_headers?: { response: ExtProcCommonResponse }
  request_body?: { response: ExtProcCommonResponse }
  response_body?: { response: ExtProcCommonResponse }
  request_trailers?: Record<string, never>
  response_trailers?: Record<string, never>
  immediate_response?: {
    /** envoy.type.v3.StatusCode: proto-loader takes the number (any, named or not). */
    status: { code: number }
    headers: { set_headers: ExtProcHeaderOption[] }
    body: Buffer
  }
  dynamic_metadata?: ExtProcStruct
}

function malformed(message: string): KinfError {
  return new KinfError('invalid_request', message)
}

/** Header names lower-cased; `raw_value` (what Envoy sends) before `value`; repeats joined. */
export function readHeaderMap(map: ExtProcHeaderMap | undefined): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const entry of map?.headers ?? []) {
    if (typeof entry.key !== 'string' || entry.key === '') throw malformed('a header without a key')
    const name = entry.key.toLowerCase()
    const value =
      entry.raw_value !== undefined && entry.raw_value.length > 0
        ? entry.raw_value.toString('utf8')
        : (entry.value ?? '')
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  return headers
}

function metadataValue(
  metadata: ExtProcMetadata | undefined,
  namespace: string,
  key: string,
): ExtProcValue | undefined {
  return metadata?.filter_metadata?.[namespace]?.fields?.[key]
}

function splitEndpoints(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
}

/**
 * The subset hint, or null without one. A header-to-metadata filter writes a comma-joined
 * string, a control plane a list; a hint of any other shape allows nothing, so that a
 * malformed hint never widens the choice.
 */
export function readSubsetHint(metadata: ExtProcMetadata | undefined): string[] | null {
  const value = metadataValue(metadata, subsetHintNamespace, subsetHintKey)
  if (value === undefined) return null
  if (typeof value.stringValue === 'string') return splitEndpoints(value.stringValue)
  return (value.listValue?.values ?? []).flatMap((item) =>
    typeof item.stringValue === 'string' ? splitEndpoints(item.stringValue) : [],
  )
}

/** The endpoint the data plane says served the request, or null. */
export function readServedEndpoint(metadata: ExtProcMetadata | undefined): string | null {
  const value = metadataValue(metadata, destinationEndpointNamespace, servedEndpointKey)
  return typeof value?.stringValue === 'string' && value.stringValue !== ''
    ? value.stringValue
    : null
}

export function headerOptions(headers: Iterable<[string, string]>): ExtProcHeaderOption[] {
  return [...headers].map(([key, value]) => ({
    header: { key, raw_value: Buffer.from(value, 'utf8') },
    // A client's own x-gateway-destination-endpoint (or content-length) must not survive.
    append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
  }))
}

/** The routing answer: the same `ip:port,...` in the request header and in `envoy.lb`. */
export function routeResponse(
  endpoints: readonly string[],
  extraHeaders: Readonly<Record<string, string>>,
  contentLength: number | null,
): { common: ExtProcCommonResponse; metadata: ExtProcStruct } {
  const destination = endpoints.join(',')
  const ours = new Set([destinationEndpointKey, 'content-length'])
  const headers: [string, string][] = [[destinationEndpointKey, destination]]
  for (const [name, value] of Object.entries(extraHeaders)) {
    if (!ours.has(name.toLowerCase())) headers.push([name, value])
  }
  if (contentLength !== null) headers.push(['content-length', String(contentLength)])
  const endpointFields = { [destinationEndpointKey]: { stringValue: destination } }
  return {
    common: {
      status: 'CONTINUE',
      header_mutation: { set_headers: headerOptions(headers) },
      clear_route_cache: true,
    },
    metadata: {
      fields: { [destinationEndpointNamespace]: { structValue: { fields: endpointFields } } },
    },
  }
}

export function continueResponse(): ExtProcCommonResponse {
  return { status: 'CONTINUE' }
}

export function streamedResponse(body: Buffer, endOfStream: boolean): ExtProcCommonResponse {
  return {
    status: 'CONTINUE',
    body_mutation: { streamed_response: { body, end_of_stream: endOfStream } },
  }
}

/**
 * A body re-emitted as streamed responses of at most streamedChunkBytes each. The last
 * carries `endOfStream`; an empty body that ends is one empty chunk, one that does not
 * (trailers follow) none.
 */
export function streamedChunks(body: Buffer, endOfStream: boolean): ExtProcCommonResponse[] {
  if (body.length === 0) return endOfStream ? [streamedResponse(body, true)] : []
  const chunks: ExtProcCommonResponse[] = []
  for (let start = 0; start < body.length; start += streamedChunkBytes) {
    const end = Math.min(start + streamedChunkBytes, body.length)
    chunks.push(streamedResponse(body.subarray(start, end), endOfStream && end === body.length))
  }
  return chunks
}

export function immediateResponse(
  status: number,
  body: string,
  headers: Readonly<Record<string, string>>,
): ExtProcResponse {
  const named = Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-type')
  const contentType = headers['content-type'] ?? 'application/json'
  return {
    immediate_response: {
      status: { code: status },
      headers: { set_headers: headerOptions([['content-type', contentType], ...named]) },
      body: Buffer.from(body, 'utf8'),
    },
  }
}
