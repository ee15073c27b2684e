import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

/** Listen addresses that mean every interface: there the KV-event sockets bind `*` too. */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '' || host === '*'
}

/**
 * The host a client names to reach a pod listening on `host`: that address, or loopback
 * for a wildcard (`tcp://*:5557` or `0.0.0.0` cannot be connected to from elsewhere).
 */
export function reachableHost(host: string): string {
  return isWildcardHost(host) ? '127.0.0.1' : host
}

/**
 * The address the KV-event sockets bind: `*` for a wildcard, else the IPv4 address of
 * `host`. libzmq binds literals and interface names only (no DNS), and the publisher's
 * sockets are IPv4, so a name is resolved here and an IPv6 address is refused.
 */
export async function zmqBindHost(host: string): Promise<string> {
  if (isWildcardHost(host)) return '*'
  if (isIP(host) === 4) return host
  if (isIP(host) === 6)
    throw new KinfError('invalid_config', `sim: ${host}: KV events bind IPv4 addresses, or ::`)
  try {
    return (await lookup(host, { family: 4 })).address
  } catch (error) {
    throw new KinfError('invalid_config', `sim: cannot resolve ${host} to an IPv4 address`, {
      cause: error,
    })
  }
}

/**
 * The PUB and ROUTER endpoints a pod binds (port 0: a free one). The publisher follows
 * vLLM's rule: it binds endpoints holding `*` or `::` and connects the others, so
 * `tcp://127.0.0.2:5557` would be connected to, not listened on. A specific address is
 * therefore given as libzmq's `source;address` form with a wildcard source: the `*` makes
 * the publisher bind, and libzmq binds the part after `;`, ignoring the source. The
 * ROUTER is always bound, so its endpoint is plain.
 */
export function kvEventBindEndpoints(
  bindHost: string,
  ports: { zmq: number; replay: number },
): { endpoint: string; replayEndpoint: string } {
  const port = (value: number) => (value === 0 ? '*' : String(value))
  const at = (value: number) => `${bindHost}:${port(value)}`
  return {
    endpoint: bindHost === '*' ? `tcp://${at(ports.zmq)}` : `tcp://*:0;${at(ports.zmq)}`,
    replayEndpoint: `tcp://${at(ports.replay)}`,
  }
}

/**
 * The ports data-parallel rank `rank` of a pod binds, as vLLM's
 * `ZmqEventPublisher.offset_endpoint_port` (vllm/distributed/kv_events.py) moves them: the
 * configured port plus the rank, each rank with its own PUB and replay ROUTER. Port 0
 * (any free one) stays 0.
 */
export function rankPorts(
  ports: { zmq: number; replay: number },
  rank: number,
): { zmq: number; replay: number } {
  const offset = (port: number, name: string) => {
    if (port === 0) return 0
    if (port + rank > 65_535)
      throw new KinfError('invalid_config', `sim: ${name} ${port} + rank ${rank} is past 65535`)
    return port + rank
  }
  return { zmq: offset(ports.zmq, 'zmqPort'), replay: offset(ports.replay, 'replayPort') }
}
