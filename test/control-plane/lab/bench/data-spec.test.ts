import { describe, expect, it } from 'vitest'
import {
  type LengthSpec,
  lengthSampler,
  parseDataSpec,
} from '../../../../control-plane/lab/bench/data-spec.ts'
import {
  isTraceData,
  loadMooncakeTrace,
} from '../../../../control-plane/lab/bench/trace/load-mooncake-trace.ts'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'

/** The KinfError parseDataSpec throws for `text` (fails the test when it does not throw one). */
function parseError(text: string): KinfError {
  try {
    parseDataSpec(text)
  } catch (error) {
    expect(error).toBeInstanceOf(KinfError)
    expect((error as KinfError).code).toBe('invalid_request')
    expect((error as KinfError).message).toMatch(/^data spec: /)
    return error as KinfError
  }
  throw new Error(`parseDataSpec accepted ${JSON.stringify(text)}`)
}

function samples(spec: LengthSpec, count: number, seed = 7): number[] {
  const sample = lengthSampler(spec, createSeededRandom(seed))
  return Array.from({ length: count }, () => sample())
}

/** A random source that replays `values` in a loop. */
function replay(...values: number[]): () => number {
  let i = 0
  return () => values[i++ % values.length] as number
}

describe('parseDataSpec: the key=value form', () => {
  it('reads the two required lengths as constants, one turn, no prefix', () => {
    expect(parseDataSpec('prompt_tokens=64,output_tokens=8')).toEqual({
      promptTokens: { avg: 64 },
      outputTokens: { avg: 8 },
      turns: 1,
      prefixBuckets: [],
    })
  })

  it('tolerates spaces around pairs, keys and values, and a trailing comma', () => {
    expect(parseDataSpec(' prompt_tokens = 64 , output_tokens=8, ')).toEqual(
      parseDataSpec('prompt_tokens=64,output_tokens=8'),
    )
  })

  it('reads _stdev, _min and _max of every length', () => {
    const spec = parseDataSpec(
      'prompt_tokens=256,prompt_tokens_stdev=32.5,prompt_tokens_min=16,prompt_tokens_max=512,' +
        'output_tokens=128,output_tokens_min=64,output_tokens_max=192,' +
        'first_prompt_tokens=2048,first_prompt_tokens_stdev=100,' +
        'first_output_tokens=300,first_output_tokens_max=400',
    )
    expect(spec.promptTokens).toEqual({ avg: 256, stdev: 32.5, min: 16, max: 512 })
    expect(spec.outputTokens).toEqual({ avg: 128, min: 64, max: 192 })
    expect(spec.firstPromptTokens).toEqual({ avg: 2048, stdev: 100 })
    expect(spec.firstOutputTokens).toEqual({ avg: 300, max: 400 })
  })

  it('leaves the first-turn lengths out when they are not given', () => {
    const spec = parseDataSpec('prompt_tokens=64,output_tokens=8,turns=5')
    expect(spec.turns).toBe(5)
    expect(spec.firstPromptTokens).toBeUndefined()
    expect(spec.firstOutputTokens).toBeUndefined()
  })

  it('turns prefix_count and prefix_tokens into one bucket of weight 100', () => {
    expect(
      parseDataSpec('prefix_count=32,prefix_tokens=4096,prompt_tokens=256,output_tokens=256')
        .prefixBuckets,
    ).toEqual([{ weight: 100, count: 32, tokens: 4096 }])
  })

  it('defaults prefix_count to 1 and prefix_tokens to 0 when only the other is given', () => {
    expect(
      parseDataSpec('prompt_tokens=64,output_tokens=8,prefix_tokens=100').prefixBuckets,
    ).toEqual([{ weight: 100, count: 1, tokens: 100 }])
    expect(parseDataSpec('prompt_tokens=64,output_tokens=8,prefix_count=3').prefixBuckets).toEqual([
      { weight: 100, count: 3, tokens: 0 },
    ])
  })

  it('reads the multi-turn preset: turns and a first prompt longer than the follow-ups', () => {
    const spec = parseDataSpec(
      'turns=5,prefix_count=8,prefix_tokens=1024,first_prompt_tokens=2048,prompt_tokens=256,output_tokens=256',
    )
    expect(spec).toEqual({
      promptTokens: { avg: 256 },
      outputTokens: { avg: 256 },
      firstPromptTokens: { avg: 2048 },
      turns: 5,
      prefixBuckets: [{ weight: 100, count: 8, tokens: 1024 }],
    })
  })
})

describe('parseDataSpec: the JSON form', () => {
  it('gives the same spec as the key=value form for the same keys', () => {
    const pairs =
      'prompt_tokens=256,prompt_tokens_stdev=10,output_tokens=32,turns=3,prefix_count=4,prefix_tokens=512'
    const json = JSON.stringify({
      prompt_tokens: 256,
      prompt_tokens_stdev: 10,
      output_tokens: 32,
      turns: 3,
      prefix_count: 4,
      prefix_tokens: 512,
    })
    expect(parseDataSpec(json)).toEqual(parseDataSpec(pairs))
    expect(parseDataSpec(`  \n${json}`)).toEqual(parseDataSpec(pairs))
  })

  it('reads prefix_buckets with their weights, counts and token lengths, in order', () => {
    const spec = parseDataSpec(
      JSON.stringify({
        prompt_tokens: 64,
        output_tokens: 8,
        prefix_buckets: [
          { bucket_weight: 40, prefix_count: 1, prefix_tokens: 6144 },
          { bucket_weight: 30, prefix_count: 8, prefix_tokens: 4096 },
          { bucket_weight: 10, prefix_count: 1, prefix_tokens: 0 },
        ],
      }),
    )
    expect(spec.prefixBuckets).toEqual([
      { weight: 40, count: 1, tokens: 6144 },
      { weight: 30, count: 8, tokens: 4096 },
      { weight: 10, count: 1, tokens: 0 },
    ])
  })

  it("fills a bucket's missing fields with GuideLLM's defaults (weight 100, count 1, 0 tokens)", () => {
    const spec = parseDataSpec(
      JSON.stringify({
        prompt_tokens: 64,
        output_tokens: 8,
        prefix_buckets: [{ prefix_tokens: 10 }, { bucket_weight: 5 }, {}],
      }),
    )
    expect(spec.prefixBuckets).toEqual([
      { weight: 100, count: 1, tokens: 10 },
      { weight: 5, count: 1, tokens: 0 },
      { weight: 100, count: 1, tokens: 0 },
    ])
  })

  it('lets prefix_buckets win over the prefix_count/prefix_tokens shorthand', () => {
    const spec = parseDataSpec(
      JSON.stringify({
        prompt_tokens: 64,
        output_tokens: 8,
        prefix_count: 9,
        prefix_tokens: 99,
        prefix_buckets: [{ bucket_weight: 1, prefix_count: 2, prefix_tokens: 20 }],
      }),
    )
    expect(spec.prefixBuckets).toEqual([{ weight: 1, count: 2, tokens: 20 }])
  })

  it('parses every shipped preset (a trace preset names a vendored trace that loads)', async () => {
    const { benchPresets } = await import('../../../../control-plane/lab/bench/bench-presets.ts')
    for (const preset of Object.values(benchPresets)) {
      if (isTraceData(preset.data))
        expect((await loadMooncakeTrace(preset.data)).length, preset.name).toBeGreaterThan(0)
      else expect(() => parseDataSpec(preset.data), preset.name).not.toThrow()
    }
  })
})

describe('parseDataSpec: refusals', () => {
  it('names unknown keys, all of them', () => {
    expect(parseError('prompt_tokens=64,output_tokens=8,foo=1,bar=2').message).toBe(
      'data spec: unknown key foo, bar',
    )
    expect(parseError('{"prompt_tokens":64,"output_tokens":8,"prefix_weight":3}').message).toMatch(
      /unknown key prefix_weight/,
    )
  })

  it('quotes a pair whose value is not a number, is empty, is missing or has two "="', () => {
    for (const bad of [
      'prompt_tokens=abc',
      'prompt_tokens=',
      'prompt_tokens= ',
      'prompt_tokens',
      'prompt_tokens=1=2',
      'prompt_tokens=Infinity',
      'prompt_tokens=NaN',
      '=64',
    ]) {
      const message = parseError(`${bad},output_tokens=8`).message
      expect(message, bad).toContain(`"${bad.trim()}" is not key=number`)
    }
  })

  it('requires prompt_tokens and output_tokens, and says so for an empty spec', () => {
    for (const text of ['', '   ', ',', 'output_tokens=8', 'prompt_tokens=8', '{}']) {
      expect(parseError(text).message, JSON.stringify(text)).toBe(
        'data spec: prompt_tokens and output_tokens are required',
      )
    }
  })

  it('refuses negative and fractional token counts, naming the field', () => {
    expect(parseError('prompt_tokens=-5,output_tokens=8').message).toMatch(/prompt_?tokens/i)
    expect(parseError('prompt_tokens=64,output_tokens=-1').message).toMatch(/output_?tokens/i)
    expect(parseError('prompt_tokens=64.5,output_tokens=8').message).toMatch(/prompt_?tokens/i)
    expect(parseError('prompt_tokens=64,output_tokens=8,prompt_tokens_stdev=-1').message).toMatch(
      /prompt_?tokens.*stdev/i,
    )
    expect(parseError('prompt_tokens=64,output_tokens=8,prompt_tokens_min=-1').message).toMatch(
      /prompt_?tokens.*min/i,
    )
    expect(parseError('prompt_tokens=64,output_tokens=8,first_prompt_tokens=-2').message).toMatch(
      /first_?prompt_?tokens/i,
    )
  })

  it('refuses zero or fractional turns, more than 1,000, and an empty prefix bucket count', () => {
    expect(parseError('prompt_tokens=64,output_tokens=8,turns=0').message).toMatch(/turns/)
    expect(parseError('prompt_tokens=64,output_tokens=8,turns=1.5').message).toMatch(/turns/)
    expect(parseError('prompt_tokens=64,output_tokens=8,turns=1001').message).toMatch(/turns/)
    expect(parseError('prompt_tokens=64,output_tokens=8,prefix_count=0').message).toMatch(
      /prefix_?(buckets|count)/i,
    )
    expect(parseError('prompt_tokens=64,output_tokens=8,prefix_tokens=-1').message).toMatch(
      /prefix_?(buckets|tokens)/i,
    )
  })

  it('refuses a zero bucket weight and non-numeric JSON values', () => {
    expect(
      parseError('{"prompt_tokens":64,"output_tokens":8,"prefix_buckets":[{"bucket_weight":0}]}')
        .message,
    ).toMatch(/prefix_?buckets.*weight/is)
    expect(parseError('{"prompt_tokens":"64","output_tokens":8}').message).toMatch(
      /prompt_?tokens/i,
    )
  })

  it('says the JSON is malformed, with the parser’s reason', () => {
    expect(parseError('{bad').message).toMatch(/^data spec: not valid JSON \(.+\)$/)
    expect(parseError('{"prompt_tokens": 64,').message).toMatch(/not valid JSON/)
  })

  it('does not take a JSON array or null for key=value pairs silently', () => {
    expect(() => parseDataSpec('[1,2]')).toThrow(KinfError)
    expect(() => parseDataSpec('null')).toThrow(KinfError)
  })

  // Bug: LengthSpec (data-spec.ts) has no check that min ≤ max, so the spec is accepted;
  // lengthSampler then returns values below min (uniform: 20 + floor(r·(5 − 20 + 1)),
  // i.e. 6..20) or always max (Gaussian: min(5, max(20, x)) = 5).
  it('refuses _min greater than _max, naming the length', () => {
    expect(
      parseError('prompt_tokens=10,prompt_tokens_min=20,prompt_tokens_max=5,output_tokens=8')
        .message,
    ).toMatch(/prompt_?tokens/i)
  })

  // Bug: parseDataSpec maps prefix_buckets with `bucket.bucket_weight`, so a null element
  // throws a TypeError ("Cannot read properties of null"), not a KinfError.
  it('refuses a prefix bucket that is not an object with a KinfError', () => {
    parseError('{"prompt_tokens":64,"output_tokens":8,"prefix_buckets":[null]}')
  })

  // Bug: prefix_buckets that is not an array is skipped (`Array.isArray` is false and no
  // shorthand is given), so the spec silently has no prefix at all.
  it('refuses prefix_buckets that is not a list', () => {
    parseError('{"prompt_tokens":64,"output_tokens":8,"prefix_buckets":{"prefix_tokens":512}}')
  })

  // Bug: only bucket_weight/prefix_count/prefix_tokens are copied out of each bucket, so a
  // misspelt key ("weight") is dropped without a word and the bucket gets weight 100,
  // although unknown top-level keys are refused.
  it('refuses an unknown key inside a prefix bucket', () => {
    expect(
      parseError(
        '{"prompt_tokens":64,"output_tokens":8,"prefix_buckets":[{"weight":5,"prefix_tokens":8}]}',
      ).message,
    ).toMatch(/weight/)
  })
})

describe('lengthSampler', () => {
  it('gives the constant avg without stdev, min or max, without drawing', () => {
    let draws = 0
    const sample = lengthSampler({ avg: 42 }, () => {
      draws++
      return 0.5
    })
    expect(Array.from({ length: 10 }, sample)).toEqual(new Array(10).fill(42))
    expect(draws).toBe(0)
  })

  it('treats stdev 0 as no stdev', () => {
    expect(new Set(samples({ avg: 42, stdev: 0 }, 100))).toEqual(new Set([42]))
  })

  it('draws uniform integers in [min, max], both ends included, without stdev', () => {
    const values = samples({ avg: 1000, min: 10, max: 14 }, 5000)
    const counts = new Map<number, number>()
    for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual([10, 11, 12, 13, 14])
    for (const count of counts.values()) expect(count / values.length).toBeGreaterThan(0.17)
    for (const count of counts.values()) expect(count / values.length).toBeLessThan(0.23)
  })

  it('maps the extremes of the random source to the ends of the uniform range', () => {
    expect(lengthSampler({ avg: 0, min: 10, max: 14 }, replay(0))()).toBe(10)
    expect(lengthSampler({ avg: 0, min: 10, max: 14 }, replay(0.999_999))()).toBe(14)
  })

  it('takes avg as the missing end of a uniform range', () => {
    expect(new Set(samples({ avg: 20, min: 18 }, 500))).toEqual(new Set([18, 19, 20]))
    expect(new Set(samples({ avg: 20, max: 22 }, 500))).toEqual(new Set([20, 21, 22]))
  })

  it('draws a rounded Gaussian with the given mean and standard deviation', () => {
    const values = samples({ avg: 500, stdev: 40 }, 20_000)
    const mean = values.reduce((sum, v) => sum + v, 0) / values.length
    const sd = Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / values.length)
    expect(values.every(Number.isInteger)).toBe(true)
    expect(Math.abs(mean - 500)).toBeLessThan(1.5)
    expect(Math.abs(sd - 40)).toBeLessThan(1.5)
    // About 68% within one σ.
    const within = values.filter((v) => Math.abs(v - 500) <= 40).length / values.length
    expect(within).toBeGreaterThan(0.66)
    expect(within).toBeLessThan(0.7)
  })

  it('clips the Gaussian at avg ± 5σ by default, and never below 1', () => {
    // u → 0 gives the largest |z| the Box–Muller transform can make (≈ 38.6σ).
    expect(lengthSampler({ avg: 100, stdev: 10 }, replay(0, 0))()).toBe(150)
    expect(lengthSampler({ avg: 100, stdev: 10 }, replay(0, 0.5))()).toBe(50)
    expect(lengthSampler({ avg: 3, stdev: 10 }, replay(0, 0.5))()).toBe(1)
    expect(lengthSampler({ avg: 3, stdev: 10 }, replay(0, 0))()).toBe(53)
    const values = samples({ avg: 8, stdev: 4 }, 5000)
    expect(Math.min(...values)).toBe(1)
    expect(Math.max(...values)).toBeLessThanOrEqual(28)
  })

  it('clips the Gaussian at explicit min and max instead', () => {
    expect(lengthSampler({ avg: 100, stdev: 10, min: 95, max: 103 }, replay(0, 0))()).toBe(103)
    expect(lengthSampler({ avg: 100, stdev: 10, min: 95, max: 103 }, replay(0, 0.5))()).toBe(95)
    const values = samples({ avg: 100, stdev: 10, min: 95, max: 103 }, 5000)
    expect(Math.min(...values)).toBe(95)
    expect(Math.max(...values)).toBe(103)
    // Only one end given: the other keeps its default.
    expect(lengthSampler({ avg: 100, stdev: 10, min: 99 }, replay(0, 0))()).toBe(150)
    expect(lengthSampler({ avg: 100, stdev: 10, max: 101 }, replay(0, 0.5))()).toBe(50)
  })

  it('gives avg at z = 0 and rounds to the nearest integer', () => {
    // cos(2π·0.25) = 0.
    expect(lengthSampler({ avg: 100, stdev: 10 }, replay(0.5, 0.25))()).toBe(100)
    // u = e^-0.5 → √(−2 ln u) = 1, cos 0 = 1: avg + stdev = 100.6 → 101.
    expect(lengthSampler({ avg: 100, stdev: 0.6 }, replay(Math.exp(-0.5), 0))()).toBe(101)
    expect(lengthSampler({ avg: 100, stdev: 0.4 }, replay(Math.exp(-0.5), 0))()).toBe(100)
  })

  it('is deterministic for a seeded source', () => {
    const spec = { avg: 256, stdev: 64, min: 32, max: 1024 }
    expect(samples(spec, 200, 11)).toEqual(samples(spec, 200, 11))
    expect(samples(spec, 200, 11)).not.toEqual(samples(spec, 200, 12))
  })
})

describe('parseDataSpec: fan-out', () => {
  it('reads fan_out with prefix_tokens as each burst’s own prefix, the window 50 ms by default', () => {
    const spec = parseDataSpec('fan_out=16,prefix_tokens=4096,prompt_tokens=64,output_tokens=32')
    expect(spec.fanOut).toEqual({ size: 16, windowMs: 50, prefixTokens: 4096 })
    expect(spec.prefixBuckets).toEqual([])
    expect(
      parseDataSpec(
        JSON.stringify({
          fan_out: 4,
          fan_out_window_ms: 10,
          prefix_tokens: 32,
          prompt_tokens: 8,
          output_tokens: 1,
        }),
      ).fanOut,
    ).toEqual({ size: 4, windowMs: 10, prefixTokens: 32 })
  })

  it('refuses fan-out keys that do not make bursts', () => {
    const base = 'prompt_tokens=8,output_tokens=1'
    expect(parseError(`fan_out=4,${base}`).message).toBe('data spec: fan_out needs prefix_tokens')
    expect(parseError(`fan_out=4,prefix_tokens=8,prefix_count=2,${base}`).message).toMatch(
      /fan_out gives each burst its own prefix/,
    )
    expect(parseError(`fan_out_window_ms=5,${base}`).message).toBe(
      'data spec: fan_out_window_ms without fan_out',
    )
    expect(parseError(`fan_out=0,prefix_tokens=8,${base}`).message).toMatch(/^data spec: fan_out: /)
    expect(parseError(`fan_out=2.5,prefix_tokens=8,${base}`).message).toMatch(
      /^data spec: fan_out: /,
    )
    expect(parseError(`fan_out=2,prefix_tokens=0,${base}`).message).toMatch(
      /^data spec: prefix_tokens: /,
    )
    expect(parseError(`fan_out=2,fan_out_window_ms=-1,prefix_tokens=8,${base}`).message).toMatch(
      /^data spec: fan_out_window_ms: /,
    )
  })
})
