import { startMetricsListener } from '../metrics/start-metrics-listener.ts'

export interface ControllerProbes {
  /** Null when ready; otherwise why not (followers are ready too: they serve probes only). */
  notReady: () => string | null
  metrics: () => string
}

/** /metrics, /healthz and /livez (the process answers) and /readyz (caches synced). */
export function startControllerServer(
  probes: ControllerProbes,
  host: string,
  port: number,
): Promise<{ url: string; close: () => Promise<void> }> {
  const alive = () => ({ status: 200, body: 'ok\n' })
  return startMetricsListener({
    name: 'controller',
    host,
    port,
    render: probes.metrics,
    probes: {
      '/healthz': alive,
      '/livez': alive,
      '/readyz': () => {
        const reason = probes.notReady()
        return reason === null
          ? { status: 200, body: 'ok\n' }
          : { status: 503, body: `not ready: ${reason}\n` }
      },
    },
  })
}
