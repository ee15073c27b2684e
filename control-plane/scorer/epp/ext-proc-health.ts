/**
 * The gRPC Health Checking service (grpc.health.v1.Health) the Endpoint Picker protocol asks
 * for: `liveness` (and the server as a whole, `""`) SERVING while the process is up;
 * `readiness` and the ext_proc service SERVING only while the picker is ready and the server
 * has not been told to stop serving (draining). Gateways health-check the EPP cluster with
 * the ext_proc service name.
 */
import type {
  ServerUnaryCall,
  ServerWritableStream,
  sendUnaryData,
  UntypedServiceImplementation,
} from '@grpc/grpc-js'
import { status as GrpcStatus } from '@grpc/grpc-js'
import type { EndpointPicker } from './endpoint-picker.ts'
import { extProcServiceName } from './ext-proc-protos.ts'

export type HealthServingStatus = 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN'

const alwaysServing = ['', 'liveness']
const servingWhenReady = ['readiness', extProcServiceName]
/** How often Watch looks at picker.ready(), which has no change event. */
const watchPollMs = 1000

export interface ExtProcHealth {
  implementation: UntypedServiceImplementation
  /** The status of a service name; null for a name this server does not know. */
  statusOf(service: string): HealthServingStatus | null
  setServing(serving: boolean): void
  /** Ends every Watch (they would hold a graceful shutdown open). */
  stop(): void
}

interface Watcher {
  service: string
  last: HealthServingStatus
  call: ServerWritableStream<{ service?: string }, { status: HealthServingStatus }>
}

export function createExtProcHealth(picker: EndpointPicker): ExtProcHealth {
  let serving = true
  const watchers = new Set<Watcher>()
  let timer: NodeJS.Timeout | undefined

  function statusOf(service: string): HealthServingStatus | null {
    if (alwaysServing.includes(service)) return 'SERVING'
    if (!servingWhenReady.includes(service)) return null
    return serving && picker.ready() ? 'SERVING' : 'NOT_SERVING'
  }

  function push(): void {
    for (const watcher of watchers) {
      const now = statusOf(watcher.service) ?? 'SERVICE_UNKNOWN'
      if (now === watcher.last) continue
      watcher.last = now
      watcher.call.write({ status: now })
    }
  }

  function unwatch(watcher: Watcher): void {
    watchers.delete(watcher)
    if (watchers.size === 0 && timer !== undefined) {
      clearInterval(timer)
      timer = undefined
    }
  }

  function check(
    call: ServerUnaryCall<{ service?: string }, { status: HealthServingStatus }>,
    callback: sendUnaryData<{ status: HealthServingStatus }>,
  ): void {
    const service = call.request.service ?? ''
    const status = statusOf(service)
    if (status === null)
      callback({ code: GrpcStatus.NOT_FOUND, details: `unknown service ${service}` })
    else callback(null, { status })
  }

  function watch(call: Watcher['call']): void {
    const service = call.request.service ?? ''
    const watcher: Watcher = { service, last: statusOf(service) ?? 'SERVICE_UNKNOWN', call }
    watchers.add(watcher)
    call.write({ status: watcher.last })
    call.on('cancelled', () => unwatch(watcher))
    if (timer === undefined) {
      timer = setInterval(push, watchPollMs)
      timer.unref()
    }
  }

  function list(
    _call: ServerUnaryCall<unknown, unknown>,
    callback: sendUnaryData<{ statuses: Record<string, { status: HealthServingStatus }> }>,
  ): void {
    const statuses: Record<string, { status: HealthServingStatus }> = {}
    for (const service of [...alwaysServing, ...servingWhenReady]) {
      statuses[service] = { status: statusOf(service) ?? 'SERVICE_UNKNOWN' }
    }
    callback(null, { statuses })
  }

  return {
    implementation: { Check: check, Watch: watch, List: list },
    statusOf,
    setServing(value) {
      serving = value
      push()
    },
    stop() {
      for (const watcher of [...watchers]) {
        unwatch(watcher)
        watcher.call.end()
      }
    },
  }
}
