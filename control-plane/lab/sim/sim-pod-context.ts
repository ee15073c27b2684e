import type { SimModel } from './model/create-sim-model.ts'
import type { OutputRequest, PlannedOutput } from './output-planner.ts'
import type { PodRuntime } from './pod-runtime.ts'
import type { RequestTimings } from './request-timings.ts'
import type { SimFaults, SimPodConfig } from './sim-pod-config.ts'

/** What request handlers of a simulated pod need; the pod owns and swaps the runtime. */
export interface SimPodContext {
  readonly config: SimPodConfig
  /** The pod's own model: tokenizer and chat rendering, not the router's. */
  readonly tokenizer: SimModel
  faults(): SimFaults
  random(): number
  newId(): string
  planOutput(request: OutputRequest): PlannedOutput
  /** The current incarnation (a restart replaces it). */
  runtime(): PodRuntime
  /** Ends in-flight responses with an error when the pod restarts or dies. */
  readonly inflight: Set<(message: string) => void>
  /** Each request's wall-clock time to first token at the pod (POST /admin/timings/take). */
  readonly timings: RequestTimings
}
