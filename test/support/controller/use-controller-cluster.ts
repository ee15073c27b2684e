import { afterEach, beforeEach } from 'vitest'
import type { CloudflareKvPublisher } from '../../../control-plane/config-store/cloudflare-kv-publisher.ts'
import { loadKubeConfig } from '../../../control-plane/controller/load-kube-config.ts'
import type { ControllerOptionsInput } from '../../../control-plane/controller/start-controller.ts'
import type { KubeApiServer, KubeObject } from '../kube-api-server/start-kube-api-server.ts'
import { redisUrl } from '../redis-test-namespaces.ts'
import {
  applyObjects,
  conditionOf,
  type InProcessController,
  kinference,
  podObject,
  putObject,
  sliceObject,
  startInProcessController,
  startTestCluster,
} from './controller-fixture.ts'

/** Where a controller publishes: Redis (the tests' own unless told), and Workers KV if given. */
export interface PublishTargets {
  redisUrl?: string
  cloudflare?: CloudflareKvPublisher | null
}

/** The test API server of the running test, and the controllers started against it. */
export interface ControllerCluster {
  readonly server: KubeApiServer
  /** The server's kubeconfig, loaded as the controller loads it. */
  kubeConfig(): ReturnType<typeof loadKubeConfig>
  /** A controller in this process publishing under `prefix`, closed after the test. */
  start(
    prefix: string,
    options?: Partial<ControllerOptionsInput>,
    targets?: PublishTargets,
  ): Promise<InProcessController>
  /** Closes a controller before the test ends (a leader that goes away). */
  stop(controller: InProcessController): Promise<void>
  /** A running pod of namespace kinference with the label app=`app`. */
  addPod(name: string, ip: string, app?: string): void
  /** Creates or replaces EndpointSlice `name` of namespace kinference listing `pods`. */
  putSlice(name: string, pods: readonly { name: string; ip: string; ready?: boolean }[]): void
  /** InferencePool `name` of namespace kinference as the server holds it now. */
  pool(name: string): KubeObject | undefined
  /** The condition `type` on that pool's status. */
  poolCondition(name: string, type: string): Record<string, unknown> | undefined
}

/**
 * Call in a describe block: before each of its tests a fresh test API server (the CRDs,
 * namespaces default and kinference) holding `resources`; after each, the controllers
 * started through `start` are closed, then the server. With `upstreamPools` the server
 * also serves the upstream InferencePool CRD (inference.networking.k8s.io/v1).
 */
export function useControllerCluster(
  resources: readonly KubeObject[] = [],
  options: { upstreamPools?: boolean } = {},
): ControllerCluster {
  let current: KubeApiServer | undefined
  const running: InProcessController[] = []
  beforeEach(async () => {
    current = await startTestCluster(undefined, options)
    applyObjects(current, resources)
  })
  afterEach(async () => {
    for (const controller of running.splice(0)) await controller.close()
    await current?.close()
    current = undefined
  })
  const server = () => {
    if (!current) throw new Error('the test API server runs only during a test')
    return current
  }
  const pool = (name: string) =>
    server().objects.get(kinference, 'inferencepools', 'kinference', name)
  return {
    get server() {
      return server()
    },
    kubeConfig: () => loadKubeConfig({ kubeconfig: server().kubeconfigPath, inCluster: false }),
    async start(prefix, options = {}, targets = {}) {
      const url = targets.redisUrl ?? redisUrl
      const controller = await startInProcessController(
        server(),
        { url, prefix },
        options,
        targets.cloudflare ?? null,
      )
      running.push(controller)
      return controller
    },
    async stop(controller) {
      await controller.close()
      const at = running.indexOf(controller)
      if (at >= 0) running.splice(at, 1)
    },
    addPod(name, ip, app = 'vllm-qwen-27b') {
      server().objects.create('v1', 'pods', podObject(name, 'kinference', { app }, ip))
    },
    putSlice(name, pods) {
      putObject(
        server(),
        'discovery.k8s.io/v1',
        'endpointslices',
        sliceObject(name, 'kinference', pods),
      )
    },
    pool,
    poolCondition: (name, type) => conditionOf(pool(name), type),
  }
}
