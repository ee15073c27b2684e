import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { hashIdStreamOf } from '../../../../../control-plane/lab/bench/bounds/hash-id-stream.ts'
import { infiniteHitCeiling } from '../../../../../control-plane/lab/bench/bounds/hit-ceiling.ts'
import { requestStreamOf } from '../../../../../control-plane/lab/bench/bounds/request-stream.ts'
import {
  chatPromptIds,
  createChatFrame,
} from '../../../../../control-plane/lab/bench/chat-prompt-ids.ts'
import {
  type MooncakeRequest,
  parseMooncakeTrace,
} from '../../../../../control-plane/lab/bench/trace/parse-mooncake-trace.ts'
import { createTraceWorkload } from '../../../../../control-plane/lab/bench/trace/trace-workload.ts'
import { loadSimModelAssets } from '../../../../../control-plane/lab/sim/sim-model-assets.ts'

const path = fileURLToPath(
  new URL('../../../../../data/traces/mooncake-synthetic.jsonl', import.meta.url),
)

describe("the infinite-cache ceiling of Mooncake's synthetic trace", () => {
  let trace: MooncakeRequest[]
  beforeAll(async () => {
    trace = parseMooncakeTrace(await readFile(path, 'utf8'), path)
  })

  it('is about 0.64 on its hash-id blocks, the derived anchor', () => {
    const ceiling = infiniteHitCeiling(hashIdStreamOf(trace))
    expect(trace).toHaveLength(3993)
    expect(ceiling.blockFraction).toBeCloseTo(0.638, 3)
    // In tokens the partial last blocks drop out of the denominator's misses.
    expect(ceiling.fraction).toBeCloseTo(0.65, 3)
  })

  it('survives the trace workload and 16-token blocks, slightly higher for partial blocks', () => {
    const assets = loadSimModelAssets()
    const frame = createChatFrame(assets.tokenizer)
    const slice = trace.slice(0, 300)
    const workload = createTraceWorkload(slice, {
      seed: 7,
      vocabulary: assets.vocabulary,
      frame,
      maxModelLen: 131_072,
      offset: 0,
      maxRequests: slice.length,
    })
    const stream = requestStreamOf(workload, (p, turns) => chatPromptIds(frame, p, turns), 1000)
    expect(stream.requests).toHaveLength(workload.size ?? 0)
    const fine = infiniteHitCeiling(stream).fraction
    const coarse = infiniteHitCeiling(hashIdStreamOf(slice)).fraction
    expect(coarse).toBeGreaterThan(0.04)
    expect(fine).toBeGreaterThanOrEqual(coarse)
    expect(fine - coarse).toBeLessThan(0.03)
  })
})
