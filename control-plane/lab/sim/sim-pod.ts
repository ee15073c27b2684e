import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { createOutputPlanner } from './output-planner.ts'
import { createPodHttpServer } from './pod-http-server.ts'
import { createPodRuntime, type PodRuntime } from './pod-runtime.ts'
import { portOf } from './rank-publishers.ts'
import { createRequestTimings } from './request-timings.ts'
import type { SimModelAssets } from './sim-model-assets.ts'
import { reachableHost, zmqBindHost } from './sim-pod-address.ts'
import {
  kvEventTopic,
  noFaults,
  type SimFaults,
  type SimFaultsPatch,
  SimPodConfig,
  type SimPodConfigInput,
} from './sim-pod-config.ts'
import type { SimPodContext } from './sim-pod-context.ts'

export interface SimPod {
  readonly config: SimPodConfig
  /** http://host:port of the OpenAI server (loopback when it listens on every interface). */
  readonly url: string
  /** Where subscribers connect for KV events and replays (host as in url), and the topic. */
  readonly kvEventsEndpoint: string
  readonly replayEndpoint: string
  /** Each data-parallel rank's, rank r at index r (the rank-0 ones above first). */
  readonly kvEventsEndpoints: readonly string[]
  readonly replayEndpoints: readonly string[]
  readonly topic: string
  readonly running: boolean
  runtime(): PodRuntime
  faults(): SimFaults
  setFaults(patch: SimFaultsPatch): SimFaults
  /** A process restart: empty cache, new block hashes, event seq 0, fresh metrics. */
  restart(): Promise<void>
  /** Gone: HTTP and ZMQ closed. Comes back restarted after downForMs, if given. */
  kill(downForMs: number | null): Promise<void>
  start(): Promise<void>
  close(): Promise<void>
}

/**
 * One simulated vLLM pod: the engine model behind vLLM's OpenAI server, /metrics and
 * KV-event sockets, plus /admin for fault injection.
 */
export async function createSimPod(
  input: SimPodConfigInput,
  assets: SimModelAssets,
): Promise<SimPod> {
  const config = SimPodConfig.parse(input)
  const random = createSeededRandom(config.seed)
  // Rank 0 draws from the pod's stream, as a pod without data parallelism does; each
  // other rank from its own, so that a rank's cache does not depend on the others' timing.
  const randoms = Array.from({ length: config.dataParallelSize }, (_, rank) =>
    rank === 0 ? random : createSeededRandom(rankSeed(config.seed, rank)),
  )
  let faults: SimFaults = { ...noFaults, ...config.faults }
  const ports = { http: config.httpPort, zmq: config.zmqPort, replay: config.replayPort }
  // Resolved once: a restart binds the same address, as a restarted process in its pod would.
  const bindHost = await zmqBindHost(config.host)
  const advertised = reachableHost(config.host)
  // Rank r on the rank-0 ports + r: createRankPublishers keeps vLLM's layout, free ports too.
  const rankEndpoints = (port: number) =>
    Array.from({ length: config.dataParallelSize }, (_, r) => `tcp://${advertised}:${port + r}`)
  let current: PodRuntime | null = null
  let server: Server | null = null
  let downTimer: NodeJS.Timeout | null = null

  const context: SimPodContext = {
    config,
    tokenizer: assets.tokenizer,
    faults: () => faults,
    random,
    newId: () => randomUUID().replaceAll('-', ''),
    planOutput: createOutputPlanner(assets.vocabulary, assets.tokenizer.eosTokenId, random),
    runtime: () => {
      if (!current) throw new Error(`pod ${config.podName} is not running`)
      return current
    },
    inflight: new Set(),
    timings: createRequestTimings(),
  }

  const startRuntime = async () => {
    current = await createPodRuntime(config, () => faults, randoms, { bindHost, ...ports })
    ports.zmq = portOf(current.publisher.endpoint)
    ports.replay = portOf(current.publisher.replayEndpoint ?? '')
  }
  const stopRuntime = async (reason: string) => {
    for (const cancel of [...context.inflight]) cancel(reason)
    const runtime = current
    current = null
    await runtime?.close()
  }

  const pod: SimPod = {
    config,
    get url() {
      return `http://${advertised}:${ports.http}`
    },
    get kvEventsEndpoint() {
      return `tcp://${advertised}:${ports.zmq}`
    },
    get replayEndpoint() {
      return `tcp://${advertised}:${ports.replay}`
    },
    get kvEventsEndpoints() {
      return rankEndpoints(ports.zmq)
    },
    get replayEndpoints() {
      return rankEndpoints(ports.replay)
    },
    topic: kvEventTopic(config),
    get running() {
      return current !== null
    },
    runtime: context.runtime,
    faults: () => faults,
    setFaults(patch) {
      faults = { ...faults, ...patch }
      current?.setPaused(faults.paused)
      return faults
    },
    async restart() {
      await stopRuntime('the pod restarted')
      await startRuntime()
    },
    async kill(downForMs) {
      if (downTimer) clearTimeout(downTimer)
      await stopRuntime('the pod was killed')
      const closing = server
      server = null
      if (closing) {
        closing.closeAllConnections()
        await new Promise((resolve) => closing.close(resolve))
      }
      if (downForMs !== null) {
        downTimer = setTimeout(() => void pod.start(), downForMs)
        downTimer.unref()
      }
    },
    async start() {
      if (server) return
      await startRuntime()
      const http = createPodHttpServer(context, {
        setFaults: (patch) => pod.setFaults(patch),
        restart: () => pod.restart(),
        kill: (downForMs) => void pod.kill(downForMs),
      })
      await new Promise<void>((resolve, reject) => {
        http.once('error', reject)
        http.listen(ports.http, config.host, () => resolve())
      })
      ports.http = (http.address() as AddressInfo).port
      server = http
    },
    async close() {
      await pod.kill(null)
    },
  }
  await pod.start()
  return pod
}

/** A seed of its own for each data-parallel rank above 0 (the golden ratio spreads them). */
function rankSeed(seed: number, rank: number): number {
  return (seed + Math.imul(rank, 0x9e3779b9)) >>> 0
}
