import { z } from 'zod'

const TcpEndpoint = z.string().regex(/^tcp:\/\/.+:\d+$/)

/**
 * One ready pod of a pool as the scorer reaches it, resolved by the controller from the
 * pool's ports and the pod's address (or given by hand to `kinfctl compile` as Pods and
 * EndpointSlices).
 */
export const PoolEndpoint = z.strictObject({
  /** Pod name; the KV index and the KV-event topic ({pod}) know the pod by it. */
  name: z.string().min(1).max(253),
  namespace: z.string().min(1).max(63),
  address: z.string().min(1).max(253),
  /** The InferenceWorkerSet (name) whose selector the pod matches, if any. */
  workerSet: z.string().nullable(),
  http: z.url({ protocol: /^https?$/ }),
  metrics: z.url({ protocol: /^https?$/ }),
  /** vLLM's ZMQ PUB socket; null when the pool publishes no KV events. */
  events: TcpEndpoint.nullable(),
  /** vLLM's ZMQ ROUTER replay socket; null without a replay port. */
  replay: TcpEndpoint.nullable(),
  /**
   * Engines of a data-parallel pod (its worker set's dataParallelSize): rank r publishes
   * on the events port + r and replays on the replay port + r. Absent for one engine, so
   * the snapshot of pods without data parallelism is what it was before the field.
   */
  dataParallelSize: z.int().min(2).max(64).optional(),
  labels: z.record(z.string(), z.string()),
})
export type PoolEndpoint = z.infer<typeof PoolEndpoint>
