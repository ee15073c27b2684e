import type { StableVocabulary } from '../../../shared/tokens/create-stable-vocabulary.ts'
import type { ChatFrame } from './chat-prompt-ids.ts'
import { parseDataSpec } from './data-spec.ts'
import { isTraceData, loadMooncakeTrace } from './trace/load-mooncake-trace.ts'
import { createTraceWorkload } from './trace/trace-workload.ts'
import { createWorkload, type Workload } from './workload.ts'

export interface BenchWorkloadOptions {
  seed: number
  vocabulary: StableVocabulary
  frame: ChatFrame
  /** The GPU profile's model.maxModelLen: longer trace requests are skipped. */
  maxModelLen: number
  /** Requests a benchmark makes: a trace's slice is this long. */
  maxRequests: number
  /** A trace's first request (0 by default). */
  traceOffset?: number
}

/** The workload a --data argument describes: `trace:FILE` replays a trace, anything else is synthetic. */
export async function createBenchWorkload(
  data: string,
  options: BenchWorkloadOptions,
): Promise<Workload> {
  if (!isTraceData(data))
    return createWorkload(parseDataSpec(data), options.seed, options.vocabulary)
  return createTraceWorkload(await loadMooncakeTrace(data), {
    seed: options.seed,
    vocabulary: options.vocabulary,
    frame: options.frame,
    maxModelLen: options.maxModelLen,
    offset: options.traceOffset ?? 0,
    maxRequests: options.maxRequests,
  })
}
