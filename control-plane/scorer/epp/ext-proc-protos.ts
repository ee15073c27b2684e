/**
 * Loads the vendored Envoy ext_proc and gRPC health protos (proto/README.md) once, for the
 * Endpoint Picker's server and for the test client that replays Envoy. google/protobuf's
 * well-known types come with protobufjs, which proto-loader resolves without include paths.
 */
import { fileURLToPath } from 'node:url'
import {
  type GrpcObject,
  loadPackageDefinition,
  type ServiceClientConstructor,
} from '@grpc/grpc-js'
import { type EnumTypeDefinition, loadSync, type PackageDefinition } from '@grpc/proto-loader'

const protoRoot = fileURLToPath(new URL('./proto/', import.meta.url))

/** One folder per upstream repository, each with its LICENSE beside its files. */
const includeDirs = ['data-plane-api', 'xds', 'protoc-gen-validate', 'grpc-proto'].map(
  (folder) => protoRoot + folder,
)

export const extProcServiceName = 'envoy.service.ext_proc.v3.ExternalProcessor'
export const healthServiceName = 'grpc.health.v1.Health'

export interface ExtProcProtos {
  /** envoy.service.ext_proc.v3.ExternalProcessor: `.service` for a server, `new` for a client. */
  externalProcessor: ServiceClientConstructor
  /** grpc.health.v1.Health. */
  health: ServiceClientConstructor
  /** envoy.type.v3.StatusCode's names by number (proto-loader decodes the known ones by name). */
  httpStatusNames: ReadonlyMap<number, string>
}

let loaded: ExtProcProtos | undefined

function lookup(root: GrpcObject, name: string): ServiceClientConstructor {
  let node: unknown = root
  for (const part of name.split('.')) node = (node as Record<string, unknown> | undefined)?.[part]
  if (typeof node !== 'function') throw new Error(`${name} is not in the vendored protos`)
  return node as ServiceClientConstructor
}

/** What proto-loader keeps of an EnumDescriptorProto. */
interface EnumDescriptor {
  value: { name: string; number: number }[]
}

function enumNames(definition: PackageDefinition, name: string): Map<number, string> {
  const type = (definition[name] as EnumTypeDefinition).type as EnumDescriptor
  return new Map(type.value.map((value) => [value.number, value.name]))
}

/**
 * The two services, messages as plain objects: field names as in the .proto (keepCase),
 * enums as their names, 64-bit integers as strings, oneofs named by a `response`/`request`
 * field, absent fields absent (no defaults). google.protobuf.Struct and Value are the
 * exception: protobufjs defines them with camelCase names (`fields`, `structValue`,
 * `stringValue`, `listValue`), and snake-case keys there are silently dropped.
 */
export function extProcProtos(): ExtProcProtos {
  if (loaded) return loaded
  const definition = loadSync(
    ['envoy/service/ext_proc/v3/external_processor.proto', 'grpc/health/v1/health.proto'],
    { keepCase: true, oneofs: true, longs: String, enums: String, defaults: false, includeDirs },
  )
  const root = loadPackageDefinition(definition)
  loaded = {
    externalProcessor: lookup(root, extProcServiceName),
    health: lookup(root, healthServiceName),
    httpStatusNames: enumNames(definition, 'envoy.type.v3.StatusCode'),
  }
  return loaded
}
