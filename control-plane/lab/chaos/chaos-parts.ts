import { createServer } from 'node:net'
import { type KinfctlProcess, startKinfctl } from '../../../test/support/e2e/kinfctl-process.ts'
import type { SimFaultsPatch } from '../sim/sim-pod-config.ts'
import { type ChaosPodPorts, chaosModel } from './chaos-platform.ts'

/** A part of the stack in its own process, which a scenario can kill and start again. */
export interface ChaosPart {
  readonly name: string
  readonly url: string
  /** Where its GET /metrics is: the listener apart from the API (scorer, edge), or the pod's own. */
  readonly metricsUrl: string
  /** The process now (a new one after each start). */
  readonly process: KinfctlProcess
  /** SIGKILL (a crash) or SIGTERM (a graceful stop); resolves with the exit code. */
  stop(signal: NodeJS.Signals): Promise<number | null>
  /** Starts it again on the same address (a restarted pod, a rescheduled scorer). */
  start(): Promise<void>
}

export interface ChaosPod extends ChaosPart {
  readonly ip: string
  readonly events: string
  readonly replay: string
  setFaults(patch: SimFaultsPatch): Promise<void>
}

/** A port free on this address now (taken again by the part that binds it). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** A part started by a kinfctl command line, ready when it prints `ready`. */
export function processPart(spec: {
  name: string
  url: string
  metricsUrl: string
  args: () => string[]
  env: Record<string, string>
  ready: RegExp
}): ChaosPart {
  let current: KinfctlProcess | null = null
  const part: ChaosPart = {
    name: spec.name,
    url: spec.url,
    metricsUrl: spec.metricsUrl,
    get process() {
      if (!current) throw new Error(`${spec.name} was never started`)
      return current
    },
    async stop(signal) {
      return current ? current.stop(signal) : null
    },
    async start() {
      current = startKinfctl(spec.name, spec.args(), spec.env)
      try {
        await current.waitFor(spec.ready, 60_000)
      } catch (error) {
        await current.stop('SIGKILL')
        throw error
      }
    },
  }
  return part
}

/** One simulated vLLM pod (`kinfctl sim --pods 1`) on its own loopback address. */
export function chaosPod(options: {
  name: string
  ip: string
  ports: ChaosPodPorts
  timeScale: number
  seed: number
  env: Record<string, string>
  /** More `kinfctl sim` arguments (KV-event variants and the like). */
  extraArgs?: readonly string[]
}): ChaosPod {
  const { name, ip, ports } = options
  const url = `http://${ip}:${ports.http}`
  const part = processPart({
    name,
    url,
    // vLLM serves /metrics on its HTTP port.
    metricsUrl: url,
    env: options.env,
    ready: /http=/,
    args: () => [
      'sim',
      '--pods',
      '1',
      '--host',
      ip,
      '--name',
      name,
      '--model',
      chaosModel,
      '--port',
      String(ports.http),
      '--zmq-port',
      String(ports.events),
      '--time-scale',
      String(options.timeScale),
      '--seed',
      String(options.seed),
      // As Kinference deploys vLLM: the scorer's index-trust check reads cached_tokens.
      '--enable-prompt-tokens-details',
      ...(options.extraArgs ?? []),
    ],
  })
  return {
    name,
    url,
    metricsUrl: url,
    get process() {
      return part.process
    },
    stop: (signal) => part.stop(signal),
    start: () => part.start(),
    ip,
    events: `tcp://${ip}:${ports.events}`,
    replay: `tcp://${ip}:${ports.replay}`,
    async setFaults(patch) {
      const response = await fetch(`${url}/admin/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(patch),
      })
      if (!response.ok) throw new Error(`${name}: faults refused: ${await response.text()}`)
    },
  }
}
