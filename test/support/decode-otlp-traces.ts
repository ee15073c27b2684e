/**
 * Reads an OTLP ExportTraceServiceRequest, protobuf or OTLP/JSON, into flat spans, with the
 * vendored opentelemetry-proto files (test/fixtures/opentelemetry-proto/README.md) and
 * protobufjs: independently of the OpenTelemetry JS exporter's serializer, so a test sees
 * what a real collector would.
 */
import { fileURLToPath } from 'node:url'
import protobuf from 'protobufjs'

export type CollectedValue =
  | string
  | number
  | boolean
  | null
  | CollectedValue[]
  | { [key: string]: CollectedValue }

export interface CollectedSpan {
  /** Lowercase hex, as in a traceparent header. */
  traceId: string
  spanId: string
  /** '' for a root span. */
  parentSpanId: string
  name: string
  /** Span.SpanKind's number (1 internal, 2 server, 3 client, 4 producer, 5 consumer). */
  kind: number
  attributes: Record<string, CollectedValue>
  /** Status.StatusCode's number (0 unset, 1 ok, 2 error). */
  status: { code: number; message: string }
  /** The resource's service.name. */
  serviceName: string
  resourceAttributes: Record<string, CollectedValue>
  scopeName: string
  scopeVersion: string
  startNs: bigint
  endNs: bigint
}

const protoRoot = fileURLToPath(new URL('../fixtures/opentelemetry-proto/', import.meta.url))
const requestTypeName = 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'
const responseTypeName = 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'

let loaded: protobuf.Root | undefined

function root(): protobuf.Root {
  if (loaded) return loaded
  const tree = new protobuf.Root()
  // The protos import each other by their path from the repository's root.
  tree.resolvePath = (_origin, target) => protoRoot + target
  tree.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto')
  tree.resolveAll()
  loaded = tree
  return tree
}

/** An empty ExportTraceServiceResponse: everything accepted. */
export function exportTraceResponseBytes(): Uint8Array {
  const type = root().lookupType(responseTypeName)
  return type.encode(type.create({})).finish()
}

/** The spans of a protobuf request; throws when the bytes are not one. */
export function decodeProtobufTraces(body: Uint8Array): CollectedSpan[] {
  const type = root().lookupType(requestTypeName)
  const message = type.decode(body)
  const plain = type.toObject(message, { longs: String, enums: Number, bytes: Array })
  return flatten(plain)
}

/** The spans of an OTLP/JSON request (ids in hex, enums as numbers); throws when it is not one. */
export function decodeJsonTraces(body: string): CollectedSpan[] {
  return flatten(JSON.parse(body))
}

type Plain = Record<string, unknown>

function object(value: unknown, what: string): Plain {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${what} is not an object`)
  return value as Plain
}

function list(value: unknown, what: string): unknown[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw new Error(`${what} is not a list`)
  return value
}

function text(value: unknown, what: string): string {
  if (value === undefined) return ''
  if (typeof value !== 'string') throw new Error(`${what} is not a string`)
  return value
}

function flatten(request: unknown): CollectedSpan[] {
  return list(object(request, 'request').resourceSpans, 'resourceSpans').flatMap((entry) => {
    const resourceSpans = object(entry, 'resourceSpans[]')
    const resource =
      resourceSpans.resource === undefined ? {} : object(resourceSpans.resource, 'resource')
    const resourceAttributes = attributesOf(resource.attributes)
    const serviceName = resourceAttributes['service.name']
    return list(resourceSpans.scopeSpans, 'scopeSpans').flatMap((scopeEntry) => {
      const scopeSpans = object(scopeEntry, 'scopeSpans[]')
      const scope = scopeSpans.scope === undefined ? {} : object(scopeSpans.scope, 'scope')
      return list(scopeSpans.spans, 'spans').map((span) => ({
        ...spanOf(object(span, 'span')),
        serviceName: typeof serviceName === 'string' ? serviceName : '',
        resourceAttributes,
        scopeName: text(scope.name, 'scope.name'),
        scopeVersion: text(scope.version, 'scope.version'),
      }))
    })
  })
}

function spanOf(span: Plain) {
  const status = span.status === undefined ? {} : object(span.status, 'status')
  return {
    traceId: idOf(span.traceId, 16, 'traceId'),
    spanId: idOf(span.spanId, 8, 'spanId'),
    parentSpanId: idOf(span.parentSpanId, 8, 'parentSpanId'),
    name: text(span.name, 'name'),
    kind: enumOf(span.kind, 'opentelemetry.proto.trace.v1.Span.SpanKind'),
    attributes: attributesOf(span.attributes),
    status: {
      code: enumOf(status.code, 'opentelemetry.proto.trace.v1.Status.StatusCode'),
      message: text(status.message, 'status.message'),
    },
    startNs: nanosOf(span.startTimeUnixNano, 'startTimeUnixNano'),
    endNs: nanosOf(span.endTimeUnixNano, 'endTimeUnixNano'),
  }
}

/** Bytes (protobuf, decoded as a list of numbers) or hex (OTLP/JSON); '' when absent. */
function idOf(value: unknown, length: number, what: string): string {
  if (value === undefined || value === '') return ''
  const hex = Array.isArray(value)
    ? value.map((byte) => Number(byte).toString(16).padStart(2, '0')).join('')
    : text(value, what).toLowerCase()
  if (hex === '') return ''
  if (!new RegExp(`^[0-9a-f]{${length * 2}}$`).test(hex))
    throw new Error(`${what} is not ${length} bytes`)
  return hex
}

/** OTLP/JSON may name an enum's value instead of numbering it. */
function enumOf(value: unknown, enumName: string): number {
  if (value === undefined) return 0
  if (typeof value === 'number' && Number.isInteger(value)) return value
  const named = root().lookupEnum(enumName).values[String(value)]
  if (named === undefined) throw new Error(`${String(value)} is not a ${enumName}`)
  return named
}

function nanosOf(value: unknown, what: string): bigint {
  if (value === undefined) return 0n
  if ((typeof value === 'string' && /^\d+$/.test(value)) || Number.isSafeInteger(value))
    return BigInt(value as string | number)
  throw new Error(`${what} is not a count of nanoseconds`)
}

function attributesOf(value: unknown): Record<string, CollectedValue> {
  const attributes: Record<string, CollectedValue> = {}
  for (const entry of list(value, 'attributes')) {
    const keyValue = object(entry, 'attribute')
    attributes[text(keyValue.key, 'attribute key')] = anyValueOf(keyValue.value)
  }
  return attributes
}

/** An AnyValue: int64 as a number (the tests' values are small), bytes in base64 as in OTLP/JSON. */
function anyValueOf(value: unknown): CollectedValue {
  if (value === undefined) return null
  const any = object(value, 'value')
  if ('stringValue' in any) return text(any.stringValue, 'stringValue')
  if ('boolValue' in any) return any.boolValue === true
  if ('intValue' in any) return integerOf(any.intValue)
  if ('doubleValue' in any) return Number(any.doubleValue)
  if ('arrayValue' in any)
    return list(object(any.arrayValue, 'arrayValue').values, 'values').map(anyValueOf)
  if ('kvlistValue' in any) return attributesOf(object(any.kvlistValue, 'kvlistValue').values)
  if ('bytesValue' in any)
    return Array.isArray(any.bytesValue)
      ? Buffer.from(any.bytesValue as number[]).toString('base64')
      : text(any.bytesValue, 'bytesValue')
  return null
}

function integerOf(value: unknown): number {
  if ((typeof value === 'string' && /^-?\d+$/.test(value)) || Number.isSafeInteger(value))
    return Number(value)
  throw new Error('intValue is not an integer')
}
