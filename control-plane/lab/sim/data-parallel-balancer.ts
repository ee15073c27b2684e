import type { RankLoad } from './engine-rank.ts'

/**
 * vLLM's choice of engine for a request that names none, among the engines of one API
 * server (`DPLBAsyncMPClient.get_core_engine_for_request`, vllm/v1/engine/core_client.py):
 * the lowest score wins, scanning from a start that moves on by one per request so that
 * ties rotate. The score is the greater of the engine's waiting + running requests and
 * the requests this server sent it that are not finished; waiting requests add a penalty
 * growing with KV-cache usage past one half (three times the waiting count when full).
 * vLLM reads the counts from its coordinator every 100 ms; the simulator reads them live.
 */
export class DataParallelBalancer {
  private start = 0

  pick(loads: readonly RankLoad[]): number {
    let chosen = 0
    let lowest = Number.POSITIVE_INFINITY
    for (let i = 0; i < loads.length; i++) {
      const index = (this.start + i) % loads.length
      const load = loads[index]
      if (!load) continue
      let score = Math.max(load.inflight, load.waiting + load.running)
      if (load.waiting > 0) score += load.waiting * 6 * Math.max(0, load.kvCacheUsage - 0.5)
      if (score < lowest) {
        lowest = score
        chosen = index
      }
    }
    this.start = (this.start + 1) % Math.max(1, loads.length)
    return chosen
  }
}
