import type { RouteResult } from '../../../shared/routing/pool-router.ts'
import { AnswerMeter } from '../serving/answer-meter.ts'
import {
  type ChosenPod,
  openAttemptRecord,
  type PoolAttempt,
  recordCompleted,
} from '../serving/attempt-record.ts'
import type { PodContext } from '../serving/inference-context.ts'
import type { LoggedRequest } from '../state/log-decision.ts'
import type { PickedResponse } from './endpoint-picker.ts'

/** Where a gateway sends a request for a pod: its HTTP address as `host:port`. */
export function endpointAddress(http: string): string {
  const url = new URL(http)
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port
  return `${url.hostname}:${port}`
}

type Record = ReturnType<typeof openAttemptRecord>

/**
 * A request the Endpoint Picker routed, from the pick to the end of its answer, which the
 * gateway carries and reports: the router's accounting as the scorer's own proxy keeps it
 * (first token, progress, end, the tokenization guard, the decision log), moved to the
 * endpoint the gateway says it actually served.
 */
export class PickedRequest {
  private readonly context: PodContext
  private readonly attempt: PoolAttempt
  private readonly options: LoggedRequest
  private chosen: ChosenPod
  private record: Record
  private meter: AnswerMeter | null = null
  private status = 0

  constructor(
    context: PodContext,
    attempt: PoolAttempt,
    options: LoggedRequest,
    chosen: ChosenPod,
  ) {
    this.context = context
    this.attempt = attempt
    this.options = options
    this.chosen = chosen
    this.record = openAttemptRecord(context, attempt, options, chosen)
  }

  get pod(): string {
    return this.chosen.pod
  }

  /**
   * The answer's head. When the gateway served another endpoint than the primary (it
   * retried a fallback), the request's accounting moves to that pod: the router then
   * counts its load, its first token and its cache where it actually is.
   */
  responseHeaders(response: PickedResponse): void {
    this.status = response.status
    const { prepared } = this.attempt
    // An embeddings answer's usage follows its vectors: the meter reads it from the tail.
    const kind = prepared.podPath === '/v1/embeddings' ? 'embeddings' : 'generation'
    this.meter = new AnswerMeter(prepared.stream, kind)
    if (response.served === null) return
    const { pool } = this.attempt.prepared
    const current = pool.endpoint(this.chosen.pod)
    if (current && endpointAddress(current.http) === response.served) return
    const served = pool.endpoints().find((pod) => endpointAddress(pod.http) === response.served)
    if (!served) {
      this.context.log(
        `epp: ${this.options.requestId} was served by ${response.served}, not an endpoint of pool ${pool.name}; accounted on ${this.chosen.pod}`,
      )
      return
    }
    this.moveTo(served.name)
  }

  /** A chunk of the answer went by. */
  responseBody(chunk: Buffer): void {
    const meter = this.meter
    if (meter === null) return
    const first = meter.add(chunk)
    if (!this.attempt.prepared.stream) return
    if (first && this.status === 200) this.record.firstToken()
    this.record.progress(meter.generatedTokens)
  }

  /** The stream ended: the answer complete, or cut off (the client or the gateway left). */
  close(outcome: 'completed' | 'aborted'): void {
    const { pool } = this.attempt.prepared
    const labels = { pool: pool.name, pod: this.chosen.pod }
    if (outcome === 'completed' && this.meter !== null) {
      const answer = { status: this.status, ...this.meter.ended() }
      this.context.metrics.requests.labels({ ...labels, outcome: 'completed' }).inc()
      recordCompleted(this.context, this.attempt, this.options, this.chosen, answer)
      this.record.log.ended({ kind: 'completed', ...answer })
      return
    }
    // Cut off before its end: the pod is not at fault (the gateway would have said so by
    // retrying another endpoint); the request no longer loads it.
    pool.router.failed(this.options.requestId, performance.now(), false)
    this.context.metrics.requests.labels({ ...labels, outcome: 'client-gone' }).inc()
    this.record.log.ended({ kind: 'client-gone' })
  }

  private moveTo(pod: string): void {
    const { router } = this.attempt.prepared.pool
    const nowMs = performance.now()
    const others = new Set(router.podNames().filter((name) => name !== pod))
    router.failed(this.options.requestId, nowMs, false)
    this.record.log.ended({
      kind: 'failed-before-bytes',
      reason: `the gateway served it on ${pod}`,
      cause: 'pod-unavailable',
    })
    const route: RouteResult = router.dispatchNow(this.attempt.lookup, nowMs, { exclude: others })
    // A pod the strategy will not route to now (cooling down after a failure) is not
    // charged: its load signals say the rest.
    if (route.decision.pod !== pod)
      this.context.log(`epp: ${this.options.requestId} served by ${pod}, which routes nothing now`)
    this.chosen = { route, pod, heldMs: this.chosen.heldMs }
    this.record = openAttemptRecord(this.context, this.attempt, this.options, this.chosen)
  }
}
