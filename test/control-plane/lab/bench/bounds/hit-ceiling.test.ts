import { describe, expect, it } from 'vitest'
import { infiniteHitCeiling } from '../../../../../control-plane/lab/bench/bounds/hit-ceiling.ts'
import type { RequestStream } from '../../../../../control-plane/lab/bench/bounds/request-stream.ts'
import { request, stream } from './stream-request.ts'

describe('infiniteHitCeiling', () => {
  it('counts the blocks seen before, up to the first miss', () => {
    const ceiling = infiniteHitCeiling(
      stream(
        request([1, 2, 3, 4]),
        request([1, 2, 3, 4]), // 4 hits
        request([1, 2, 9, 10]), // 2 hits
        // Block 2 and 3 are cached, but block 0 is not: nothing counts.
        request([7, 2, 3]),
      ),
    )
    expect(ceiling.hitTokens).toBe(6 * 16)
    expect(ceiling.promptTokens).toBe(65 + 65 + 65 + 49)
    expect(ceiling.fraction).toBe(96 / 244)
    // Trace terms: every block a prompt touches, the partial one included.
    expect(ceiling.blockFraction).toBe(6 / (5 + 5 + 5 + 4))
  })

  it('never counts the block holding the last prompt token', () => {
    // 64 tokens: four full blocks, but vLLM computes the 64th token itself.
    const ceiling = infiniteHitCeiling(stream(request([1, 2, 3, 4], 64), request([1, 2, 3, 4], 64)))
    expect(ceiling.hitTokens).toBe(3 * 16)
  })

  it("lets a later turn hit the blocks of an earlier turn's answer", () => {
    const ceiling = infiniteHitCeiling(
      stream(request([1, 2], 40, [3, 4]), request([1, 2, 3, 4, 5], 90)),
    )
    expect(ceiling.hitTokens).toBe(4 * 16)
  })

  it('is zero for a stream without reuse and for an empty one', () => {
    expect(infiniteHitCeiling(stream(request([1, 2]), request([3, 4]))).fraction).toBe(0)
    expect(infiniteHitCeiling(stream()).fraction).toBe(0)
  })

  it('works in any block size: a trace of 512-token hash ids', () => {
    // Mooncake-style: 1,100 tokens are 3 hash ids, the last one partial and never cached.
    const trace: RequestStream = {
      blockSize: 512,
      requests: [request([10, 11], 1100), request([10, 11], 1100), request([10, 12], 1200)],
    }
    const ceiling = infiniteHitCeiling(trace)
    expect(ceiling.hitTokens).toBe(3 * 512)
    expect(ceiling.fraction).toBe(1536 / 3400)
    expect(ceiling.blockFraction).toBe(3 / 9)
  })
})
