import { type BlockKeyChain, foldKey } from '../../kv-index/block-keys.ts'

/** Each block's identity for counting: its key folded to an exact number (foldKey). */
export function blockIdsOf(keys: BlockKeyChain): number[] {
  const ids = new Array<number>(keys.length / 2)
  for (let block = 0; block < ids.length; block++)
    ids[block] = foldKey(keys[2 * block] as number, keys[2 * block + 1] as number)
  return ids
}

/** What a pod holds for the requests routed to it and not yet released. */
export interface ActiveLoad {
  /** Distinct blocks of those requests' prompts: a block several of them share counts once. */
  activeBlocks: number
  /** Uncached prompt tokens of those requests whose prefill has not finished. */
  activePrefillTokens: number
  activeRequests: number
}

/**
 * Dynamo's `ActiveSequences` (DYN `lib/kv-router/src/sequences/single.rs`, `prompt_registry.rs`):
 * per pod, the prompt blocks of the requests in flight, reference-counted by block identity,
 * and the prefill tokens each request was charged until its prefill completes. Output blocks
 * are not tracked (Dynamo's `router_track_output_blocks` is off by default).
 */
export interface ActiveSequences {
  /** A request routed to `pod`, holding `blocks`, charged `prefillTokens` until prefillDone. */
  add(id: string, pod: string, blocks: readonly number[], prefillTokens: number): void
  /** Its first token: the prefill left the pod's load; its blocks stay until free. */
  prefillDone(id: string): void
  /** Finished or failed: its blocks are released (a block other requests hold stays). */
  free(id: string): void
  removePod(pod: string): void
  load(pod: string): ActiveLoad
  /**
   * Blocks of a request that would be new on `pod`: all of them after the leading run the pod
   * already has active, as Dynamo projects `query_len − overlap_depth`.
   */
  newBlocks(pod: string, blocks: readonly number[]): number
}

interface PodSequences {
  refs: Map<number, number>
  prefillTokens: number
  requests: number
}

interface ActiveRequest {
  pod: string
  blocks: readonly number[]
  /** 0 once the prefill is done. */
  prefillTokens: number
}

export function createActiveSequences(): ActiveSequences {
  const pods = new Map<string, PodSequences>()
  const requests = new Map<string, ActiveRequest>()

  function podOf(name: string): PodSequences {
    let pod = pods.get(name)
    if (pod === undefined) {
      pod = { refs: new Map(), prefillTokens: 0, requests: 0 }
      pods.set(name, pod)
    }
    return pod
  }

  function prefillDone(id: string): void {
    const request = requests.get(id)
    const pod = request && pods.get(request.pod)
    if (!request || !pod) return
    pod.prefillTokens -= request.prefillTokens
    request.prefillTokens = 0
  }

  function free(id: string): void {
    const request = requests.get(id)
    if (!request) return
    prefillDone(id)
    requests.delete(id)
    const pod = pods.get(request.pod)
    if (!pod) return
    pod.requests--
    for (const block of request.blocks) {
      const count = pod.refs.get(block) ?? 0
      if (count <= 1) pod.refs.delete(block)
      else pod.refs.set(block, count - 1)
    }
  }

  return {
    add(id, name, blocks, prefillTokens) {
      // Routed again before a release (a retry the core re-dispatches): the newest placement wins.
      free(id)
      const pod = podOf(name)
      const distinct = [...new Set(blocks)]
      for (const block of distinct) pod.refs.set(block, (pod.refs.get(block) ?? 0) + 1)
      pod.prefillTokens += prefillTokens
      pod.requests++
      requests.set(id, { pod: name, blocks: distinct, prefillTokens })
    },
    prefillDone,
    free,
    removePod(name) {
      pods.delete(name)
      for (const [id, request] of requests) if (request.pod === name) requests.delete(id)
    },
    load(name) {
      const pod = pods.get(name)
      return {
        activeBlocks: pod?.refs.size ?? 0,
        activePrefillTokens: pod?.prefillTokens ?? 0,
        activeRequests: pod?.requests ?? 0,
      }
    },
    newBlocks(name, blocks) {
      const refs = pods.get(name)?.refs
      let depth = 0
      while (refs !== undefined && depth < blocks.length && refs.has(blocks[depth] as number))
        depth++
      return blocks.length - depth
    },
  }
}
