import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { ScorerPod } from '../scorer-config.ts'

/**
 * The endpoint name of a data-parallel engine: the pod's name and its rank. A Kubernetes
 * name never holds "/", so no pod's own name can be mistaken for one of these.
 */
export function rankEndpointName(pod: string, rank: number): string {
  return `${pod}/dp${rank}`
}

/**
 * A KV-event endpoint moved to rank `rank`, as vLLM's `ZmqEventPublisher.offset_endpoint_port`
 * moves the configured one (vllm/distributed/kv_events.py): the port plus the rank, the
 * host as it is. A port past 65535 is refused: vLLM could not bind it either.
 */
export function offsetEndpointPort(endpoint: string, rank: number): string {
  const colon = endpoint.lastIndexOf(':')
  const port = Number(endpoint.slice(colon + 1))
  if (colon < 0 || !Number.isInteger(port))
    throw new KinfError('invalid_config', `${endpoint}: no port to offset by rank ${rank}`)
  if (port + rank > 65_535)
    throw new KinfError('invalid_config', `${endpoint}: port + rank ${rank} is past 65535`)
  return `${endpoint.slice(0, colon)}:${port + rank}`
}

/**
 * The endpoints of a pod running `size` data-parallel engines behind its one HTTP server
 * (vLLM --data-parallel-size): one per rank, each indexed from its own KV-event socket and
 * replay socket (the pod's ports + rank, each with its own sequence), scraped for its own
 * `engine` series of the pod's /metrics, and routed to with X-data-parallel-rank. A pod of
 * one engine is itself, unranked.
 */
export function dataParallelEndpoints(pod: ScorerPod, size: number): ScorerPod[] {
  if (!Number.isInteger(size) || size < 1)
    throw new KinfError('invalid_config', `${pod.name}: data-parallel size ${size} is not >= 1`)
  if (size === 1) return [pod]
  if (pod.dataParallelRank !== null)
    throw new KinfError('invalid_config', `${pod.name} is a data-parallel rank already`)
  return Array.from({ length: size }, (_, rank) => ({
    ...pod,
    name: rankEndpointName(pod.name, rank),
    events: pod.events === null ? null : offsetEndpointPort(pod.events, rank),
    replay: pod.replay === null ? null : offsetEndpointPort(pod.replay, rank),
    dataParallelRank: rank,
  }))
}
