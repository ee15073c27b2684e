import { KinfError } from '../../../shared/errors/kinf-error.ts'
import {
  createKvEventPublisher,
  type KvEventPublisher,
} from '../../kv-events/create-kv-event-publisher.ts'
import { kvEventBindEndpoints, rankPorts } from './sim-pod-address.ts'
import { kvEventTopic, type SimPodConfig } from './sim-pod-config.ts'

export interface RankSockets {
  bindHost: string
  /** Rank 0's PUB and ROUTER ports; 0 picks a free one. */
  zmq: number
  replay: number
}

/** Tries at finding free ports that leave room for every rank above them. */
const attempts = 20

/**
 * The KV-event publishers of a pod's data-parallel ranks, rank r's PUB on the events port
 * + r and its ROUTER on the replay port + r, each numbering its own batches from 0 and
 * stamping them with its rank, as vLLM's ZmqEventPublisher does (vllm/distributed/
 * kv_events.py). A port of 0 is a free one for rank 0, the other ranks taking the ports
 * after it; when one of those is taken, every socket is closed and other free ports tried.
 * Ports given that make the two ranges overlap are refused: vLLM would fail to bind.
 */
export async function createRankPublishers(
  config: SimPodConfig,
  sockets: RankSockets,
): Promise<KvEventPublisher[]> {
  const size = config.dataParallelSize
  const { zmq, replay } = sockets
  if (size > 1 && zmq !== 0 && replay !== 0 && zmq < replay + size && replay < zmq + size)
    throw new KinfError(
      'invalid_config',
      `sim: with ${size} data-parallel ranks the events ports ${zmq}-${zmq + size - 1} and the replay ports ${replay}-${replay + size - 1} overlap`,
    )
  const free = zmq === 0 || replay === 0
  for (let attempt = 1; ; attempt++) {
    const opened: KvEventPublisher[] = []
    try {
      const first = await openRank(config, sockets.bindHost, { zmq, replay }, 0)
      opened.push(first)
      const base = { zmq: portOf(first.endpoint), replay: portOf(first.replayEndpoint ?? '') }
      for (let rank = 1; rank < size; rank++)
        opened.push(await openRank(config, sockets.bindHost, rankPorts(base, rank), rank))
      return opened
    } catch (error) {
      await Promise.all(opened.map((publisher) => publisher.close()))
      if (!free || size === 1 || attempt >= attempts) throw error
    }
  }
}

function openRank(
  config: SimPodConfig,
  bindHost: string,
  ports: { zmq: number; replay: number },
  rank: number,
): Promise<KvEventPublisher> {
  return createKvEventPublisher({
    ...kvEventBindEndpoints(bindHost, ports),
    topic: kvEventTopic(config),
    encoding: config.eventEncoding,
    dataParallelRank: rank,
    replayFraming: config.kvEvents.replayFraming,
  })
}

export function portOf(endpoint: string): number {
  const port = Number(endpoint.split(':').at(-1))
  if (!Number.isInteger(port)) throw new Error(`no port in ${endpoint}`)
  return port
}
