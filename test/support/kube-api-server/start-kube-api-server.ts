import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { builtInResources } from './built-in-resources.ts'
import { requestHandler } from './handle-request.ts'
import type { KubeObject } from './kube-object.ts'
import { type KubeObjects, kubeObjects } from './kube-objects.ts'
import { ObjectStore } from './object-store.ts'
import { ResourceApi } from './resource-api.ts'
import { ResourceRegistry } from './resource-registry.ts'
import type { Faults, ForbidRule, KubeRequest, ServerContext } from './server-context.ts'
import { WatchStreams } from './watch-streams.ts'
import { type KubeconfigOptions, writeKubeconfig } from './write-kubeconfig.ts'

export type { KubeObject } from './kube-object.ts'
export type { KubeObjects } from './kube-objects.ts'
export type { ForbidRule, KubeRequest } from './server-context.ts'

/*
 * An in-process Kubernetes API server for tests, good enough for @kubernetes/client-node
 * and kubectl 1.33 (both tested in this folder). Not implemented, so not testable here:
 * real server-side apply (no field ownership, conflicts or removal of fields a manager
 * stopped applying: apply merges the body like a merge patch), strategic merge by list
 * keys (lists are replaced), schema validation beyond unknown fields (types, enums,
 * required, CEL rules, admission), RBAC beyond `forbid`, authentication (any token, or
 * none, is accepted), protobuf bodies (so `kubectl create namespace|secret|configmap`
 * get 415: apply YAML instead), pagination (`limit` is ignored, lists come whole),
 * OpenAPI v2, aggregated discovery, garbage collection by ownerReferences, graceful pod
 * deletion, and built-in kinds other than those in built-in-resources.ts.
 */

export interface KubeApiServerOptions {
  /** 0 (the default) picks a free port on 127.0.0.1. */
  port?: number
  /** The bearer token of the default kubeconfig's user. */
  token?: string
  /** Created at start; `default`, `kube-system` and `kube-public` unless given. */
  namespaces?: string[]
  /** CRD YAML files, or folders of them, registered at start (as if applied). */
  crds?: string[]
  /** How often watches that allow bookmarks get one; the real server waits about a minute. */
  bookmarkIntervalMs?: number
  /** Larger request bodies get 413, as the real server's 3 MiB limit does. */
  maxBodyBytes?: number
  /** Changes kept for watches to replay; older resourceVersions get 410 Expired. */
  historyLimit?: number
}

export interface KubeApiServer {
  /** http://127.0.0.1:PORT */
  url: string
  /** A kubeconfig for `url` with the default token, in a temp folder `close()` removes. */
  kubeconfigPath: string
  token: string
  /** Another kubeconfig in the same folder: e.g. a token that `forbid` denies. */
  writeKubeconfig(options?: KubeconfigOptions): string
  objects: KubeObjects
  /** Every HTTP request so far, in arrival order (tests may clear it: `requests.length = 0`). */
  requests: KubeRequest[]
  /** The latest resourceVersion written. */
  readonly resourceVersion: string
  readonly openWatches: number
  /** Aborts every open watch's socket: clients see a premature close. */
  dropWatches(): void
  /** Forgets history: a watch from any older resourceVersion gets ERROR 410 Expired. */
  compactHistory(): void
  /** While on, watches (open or new) stay open but are sent nothing, ever again. */
  stallWatches(on: boolean): void
  /** While on, every request gets 503 ServiceUnavailable (open watches are not touched). */
  setUnavailable(on: boolean): void
  /** Answers 403 Forbidden to matching requests until the returned function is called. */
  forbid(rule: ForbidRule): () => void
  /**
   * Calls `hook` with each resource request (path, method, resource, name) before it is
   * served, until the returned function is called: e.g. another client's write that lands
   * between a GET and the PUT that follows it.
   */
  beforeRequest(hook: (request: KubeRequest) => void): () => void
  close(): Promise<void>
}

export async function startKubeApiServer(
  options: KubeApiServerOptions = {},
): Promise<KubeApiServer> {
  const registry = new ResourceRegistry()
  for (const type of builtInResources()) registry.add(type)
  const store = new ObjectStore(options.historyLimit)
  const now = () => new Date()
  const api = new ResourceApi(registry, store, now)
  const watches = new WatchStreams(store, options.bookmarkIntervalMs ?? 1_000)
  const faults: Faults = { unavailable: false, forbidden: [], before: [] }
  const requests: KubeRequest[] = []
  const objects = kubeObjects(api, registry)
  for (const name of options.namespaces ?? ['default', 'kube-system', 'kube-public']) {
    objects.create('v1', 'namespaces', { metadata: { name } })
  }
  for (const crd of readCrds(options.crds ?? [])) {
    objects.create('apiextensions.k8s.io/v1', 'customresourcedefinitions', crd)
  }
  let address = ''
  const ctx: ServerContext = {
    ...{ registry, store, api, watches, faults, requests, now },
    maxBodyBytes: options.maxBodyBytes ?? 3 * 1024 * 1024,
    serverAddress: () => address,
  }
  const server = createServer(requestHandler(ctx))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', resolve)
  })
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`
  const url = `http://${address}`
  const dir = mkdtempSync(join(tmpdir(), 'kube-api-server-'))
  const token = options.token ?? 'test-token'
  return {
    url,
    kubeconfigPath: writeKubeconfig(dir, url, { token }),
    token,
    writeKubeconfig: (more = {}) => writeKubeconfig(dir, url, { token, ...more }),
    objects,
    requests,
    get resourceVersion() {
      return String(store.resourceVersion)
    },
    get openWatches() {
      return watches.openCount
    },
    dropWatches: () => watches.dropAll(),
    compactHistory: () => store.compact(),
    stallWatches: (on) => watches.stall(on),
    setUnavailable: (on) => {
      faults.unavailable = on
    },
    forbid: (rule) => {
      faults.forbidden.push(rule)
      return () => {
        faults.forbidden = faults.forbidden.filter((r) => r !== rule)
      }
    },
    beforeRequest: (hook) => {
      faults.before.push(hook)
      return () => {
        faults.before = faults.before.filter((h) => h !== hook)
      }
    },
    close: async () => {
      watches.endAll()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

function readCrds(paths: string[]): KubeObject[] {
  const files = paths.flatMap((path) =>
    statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((name) => /\.ya?ml$/.test(name))
          .sort()
          .map((name) => join(path, name))
      : [path],
  )
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8'))
      .map((doc) => doc.toJS() as KubeObject)
      .filter((doc) => doc?.kind === 'CustomResourceDefinition'),
  )
}
