import type { Server } from 'node:http'

/** What a drain waits for: the requests in flight (a stream until its last byte). */
export interface ServerActivity {
  inFlight: number
}

/** Counts the server's requests in flight, each until its response closes. */
export function trackActivity(server: Server): ServerActivity {
  const activity: ServerActivity = { inFlight: 0 }
  server.on('request', (_req, res) => {
    activity.inFlight++
    res.once('close', () => activity.inFlight--)
  })
  return activity
}

/**
 * Until the requests in flight are done or `drainMs` passes: new connections are refused
 * (a probe's too, so the pod leaves its Service), and keep-alive ones close once idle.
 * Returns how many were still in flight at the deadline (the caller cuts them).
 */
export async function drainHttpServer(
  server: Server,
  activity: ServerActivity,
  drainMs: number,
): Promise<number> {
  if (drainMs <= 0) return activity.inFlight
  // Refuses new connections; the callback would wait for every connection, so none.
  if (server.listening) server.close()
  const deadline = performance.now() + drainMs
  while (activity.inFlight > 0 && performance.now() < deadline) {
    server.closeIdleConnections()
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return activity.inFlight
}

/** Cuts every connection left and resolves once the server is closed (at once if it was). */
export function closeHttpServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })
}
