import type { ObjectStore } from './object-store.ts'
import type { ResourceApi } from './resource-api.ts'
import type { ResourceRegistry } from './resource-registry.ts'
import type { WatchStreams } from './watch-streams.ts'

/** One HTTP request as the server understood it, for tests that count calls. */
export interface KubeRequest {
  method: string
  path: string
  query: Record<string, string>
  /** The Kubernetes verb (get, list, watch, create, update, patch, delete, deletecollection). */
  verb?: string
  group?: string
  version?: string
  resource?: string
  subresource?: string
  namespace?: string
  name?: string
  contentType?: string
  /** The bearer token; kubectl sends none over plain HTTP. */
  token?: string
  /** The HTTP status answered (200 for a watch once its headers went out). */
  code: number
}

/** A bearer token's requests on these verbs and resources get 403 Forbidden. */
export interface ForbidRule {
  /** A bearer token, or `system:anonymous` for requests without one (kubectl's). */
  token: string
  /** Kubernetes verbs; all when omitted. */
  verbs?: string[]
  /** `plural`, `plural/status` or `plural.group`; all when omitted. */
  resources?: string[]
}

export interface Faults {
  unavailable: boolean
  forbidden: ForbidRule[]
  /** Called with each resource request before it is served (a write racing it, say). */
  before: ((request: KubeRequest) => void)[]
}

export interface ServerContext {
  registry: ResourceRegistry
  store: ObjectStore
  api: ResourceApi
  watches: WatchStreams
  faults: Faults
  requests: KubeRequest[]
  maxBodyBytes: number
  now: () => Date
  /** host:port, for the serverAddressByClientCIDRs discovery field. */
  serverAddress: () => string
}
