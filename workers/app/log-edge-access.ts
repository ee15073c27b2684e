import type { Log } from '../../shared/logging/log.ts'
import type { EdgeRequestObserver } from './observe-edge-requests.ts'

/**
 * The access log: one `info` line per request a client made, when its answer ends (a
 * stream's last byte): who, what, how it ended, how long it took and what it used. The
 * chat request the edge makes for a /v1/responses is not a client's, and is left out.
 */
export function logEdgeAccess(log: Log): EdgeRequestObserver {
  return {
    ended: (c, ended) => {
      if (ended.internal) return
      const requestId = c.get('requestId') as string | undefined
      const span = c.get('trace')?.span.spanContext()
      log('request', {
        level: 'info',
        kind: 'access',
        request_id: requestId,
        method: c.req.method,
        path: c.req.path.slice(0, 256),
        status: ended.status,
        tenant: ended.tenant,
        model: ended.model?.slice(0, 256),
        duration_ms: Math.round(ended.e2eSeconds * 1000),
        ttft_ms: ended.ttftSeconds === null ? undefined : Math.round(ended.ttftSeconds * 1000),
        prompt_tokens: ended.tokens?.prompt,
        completion_tokens: ended.tokens?.completion,
        cached_tokens: ended.tokens?.cached ?? undefined,
        complete: ended.complete,
        trace_id: span?.traceId,
      })
    },
  }
}
