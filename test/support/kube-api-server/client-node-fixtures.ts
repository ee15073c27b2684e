import { readFileSync } from 'node:fs'
import {
  ApiException,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node'
import { afterAll, beforeAll } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { type KubeApiServer, startKubeApiServer } from './start-kube-api-server.ts'

export const group = 'kinference.dev'
export const version = 'v1alpha1'
export const namespace = 'kinference'
export const pools = { group, version, namespace, plural: 'inferencepools' }
export const poolsPath = `/apis/${group}/${version}/namespaces/${namespace}/inferencepools`
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch)

export type Pool = KubernetesObject & { spec: Record<string, any>; status?: Record<string, any> }

/** The platform example's first InferencePool, renamed. */
export function examplePool(name: string): Pool {
  const [doc] = parseAllDocuments(readFileSync('infra/k8s/examples/platform.yaml', 'utf8'))
  const pool = doc?.toJS() as Pool
  return { ...pool, metadata: { name, namespace } }
}

/** The ApiException a request fails with: its HTTP code and Status body. */
export async function failure(promise: Promise<unknown>): Promise<{ code: number; body: any }> {
  try {
    await promise
  } catch (error) {
    if (!(error instanceof ApiException)) throw error
    const body = typeof error.body === 'string' ? JSON.parse(error.body) : error.body
    return { code: error.code, body }
  }
  throw new Error('the request succeeded')
}

export async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A test API server and client-node's view of it. */
export interface ServerWithClient {
  server: KubeApiServer
  kc: KubeConfig
  custom: CustomObjectsApi
}

/** A server with the Kinference CRDs and a client-node KubeConfig for it. */
async function startWithClient(): Promise<ServerWithClient> {
  const server = await startKubeApiServer({
    namespaces: ['default', namespace],
    crds: ['infra/k8s/crds'],
    bookmarkIntervalMs: 100,
  })
  const kc = new KubeConfig()
  kc.loadFromFile(server.kubeconfigPath)
  return { server, kc, custom: kc.makeApiClient(CustomObjectsApi) }
}

/**
 * Call in a test file: one server with its client for all the file's tests, started before
 * the first and closed after the last; the answer reads them while the tests run.
 */
export function useServerWithClient(): ServerWithClient {
  let started: ServerWithClient | undefined
  beforeAll(async () => {
    started = await startWithClient()
  })
  afterAll(async () => {
    await started?.server.close()
    started = undefined
  })
  const current = () => {
    if (!started) throw new Error('the test API server runs only while the tests do')
    return started
  }
  return {
    get server() {
      return current().server
    },
    get kc() {
      return current().kc
    },
    get custom() {
      return current().custom
    },
  }
}
