import { z } from 'zod'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

/**
 * A token-length distribution as GuideLLM samples it: with a stdev, a clipped rounded
 * Gaussian (min defaults to max(1, avg − 5σ), max to avg + 5σ); without one but with
 * min/max, a uniform integer; otherwise the constant `avg`.
 */
export const LengthSpec = z
  .strictObject({
    avg: z.int().min(0),
    stdev: z.number().min(0).optional(),
    min: z.int().min(0).optional(),
    max: z.int().min(0).optional(),
  })
  .refine((spec) => spec.min === undefined || spec.max === undefined || spec.min <= spec.max, {
    message: '_min is above _max',
  })
export type LengthSpec = z.infer<typeof LengthSpec>

export const PrefixBucket = z.strictObject({
  weight: z.number().positive().default(100),
  count: z.int().min(1).default(1),
  tokens: z.int().min(0).default(0),
})
export type PrefixBucket = z.infer<typeof PrefixBucket>

/**
 * Sibling bursts (a fan-out: one prompt answered `size` ways at once): conversations come
 * in groups of `size` that share a system prefix of `prefixTokens` no other group has
 * (so no pod holds it when the group arrives), each with its own user text. Open loop:
 * groups arrive as the profile's process at rate / size (the profile's rate stays in
 * requests/s, like every other workload), siblings spread uniformly over `windowMs`.
 */
export const FanOutSpec = z.strictObject({
  size: z.int().min(1).max(1_024),
  windowMs: z.number().min(0).max(3_600_000).default(50),
  prefixTokens: z.int().min(1),
})
export type FanOutSpec = z.infer<typeof FanOutSpec>

/** GuideLLM's synthetic data, as the benchmark generates it. */
export const DataSpec = z.strictObject({
  promptTokens: LengthSpec,
  outputTokens: LengthSpec,
  /** Multi-turn: the first turn's lengths, when they differ. */
  firstPromptTokens: LengthSpec.optional(),
  firstOutputTokens: LengthSpec.optional(),
  turns: z.int().min(1).max(1_000).default(1),
  /** Shared prefixes (a system message under chat): drawn per conversation, by weight. */
  prefixBuckets: z.array(PrefixBucket).max(64).default([]),
  fanOut: FanOutSpec.optional(),
})
export type DataSpec = z.infer<typeof DataSpec>

const lengthKeys = [
  'prompt_tokens',
  'output_tokens',
  'first_prompt_tokens',
  'first_output_tokens',
] as const
const lengthField = {
  prompt_tokens: 'promptTokens',
  output_tokens: 'outputTokens',
  first_prompt_tokens: 'firstPromptTokens',
  first_output_tokens: 'firstOutputTokens',
} as const

/**
 * Parses GuideLLM's data argument: `key=value,key=value` (prompt_tokens, output_tokens,
 * first_prompt_tokens, first_output_tokens, each with _stdev/_min/_max; prefix_count,
 * prefix_tokens; turns; fan_out, fan_out_window_ms) or the same keys as a JSON object,
 * which can also hold `prefix_buckets: [{bucket_weight, prefix_count, prefix_tokens}]`.
 * With fan_out, prefix_tokens is the length of each burst's own prefix.
 */
export function parseDataSpec(text: string): DataSpec {
  const raw = text.trim().startsWith('{') ? parseJson(text) : parsePairs(text)
  const out: Record<string, unknown> = {}
  for (const key of lengthKeys) {
    if (raw[key] === undefined) continue
    out[lengthField[key]] = {
      avg: raw[key],
      ...(raw[`${key}_stdev`] !== undefined && { stdev: raw[`${key}_stdev`] }),
      ...(raw[`${key}_min`] !== undefined && { min: raw[`${key}_min`] }),
      ...(raw[`${key}_max`] !== undefined && { max: raw[`${key}_max`] }),
    }
  }
  for (const key of lengthKeys) {
    const orphans = ['_stdev', '_min', '_max'].filter(
      (suffix) => raw[`${key}${suffix}`] !== undefined && raw[key] === undefined,
    )
    if (orphans.length > 0)
      throw new KinfError(
        'invalid_request',
        `data spec: ${orphans.map((suffix) => `${key}${suffix}`).join(', ')} without ${key}`,
      )
  }
  if (raw.turns !== undefined) out.turns = raw.turns
  if (raw.fan_out !== undefined) out.fanOut = parseFanOut(raw)
  else if (raw.fan_out_window_ms !== undefined)
    throw new KinfError('invalid_request', 'data spec: fan_out_window_ms without fan_out')
  else if (raw.prefix_buckets !== undefined) {
    out.prefixBuckets = parseBuckets(raw.prefix_buckets)
  } else if (raw.prefix_tokens !== undefined || raw.prefix_count !== undefined) {
    out.prefixBuckets = [{ count: raw.prefix_count ?? 1, tokens: raw.prefix_tokens ?? 0 }]
  }
  const known = new Set([
    ...lengthKeys.flatMap((key) => [key, `${key}_stdev`, `${key}_min`, `${key}_max`]),
    'turns',
    'prefix_count',
    'prefix_tokens',
    'prefix_buckets',
    'fan_out',
    'fan_out_window_ms',
  ])
  const unknown = Object.keys(raw).filter((key) => !known.has(key))
  if (unknown.length > 0)
    throw new KinfError('invalid_request', `data spec: unknown key ${unknown.join(', ')}`)
  if (out.promptTokens === undefined || out.outputTokens === undefined) {
    throw new KinfError(
      'invalid_request',
      'data spec: prompt_tokens and output_tokens are required',
    )
  }
  const parsed = DataSpec.safeParse(out)
  if (!parsed.success)
    throw new KinfError(
      'invalid_request',
      `data spec: ${parsed.error.issues.map((issue) => `${userKey(issue.path)}: ${issue.message}`).join('; ')}`,
    )
  return parsed.data
}

/** fan_out's keys; its prefix is prefix_tokens, and no other prefix can go with it. */
function parseFanOut(raw: Record<string, unknown>): Record<string, unknown> {
  if (raw.prefix_count !== undefined || raw.prefix_buckets !== undefined)
    throw new KinfError(
      'invalid_request',
      'data spec: fan_out gives each burst its own prefix: use prefix_tokens, not prefix_count or prefix_buckets',
    )
  if (raw.prefix_tokens === undefined)
    throw new KinfError('invalid_request', 'data spec: fan_out needs prefix_tokens')
  return {
    size: raw.fan_out,
    prefixTokens: raw.prefix_tokens,
    ...(raw.fan_out_window_ms !== undefined && { windowMs: raw.fan_out_window_ms }),
  }
}

const fanOutKeys: Record<string, string> = {
  size: 'fan_out',
  windowMs: 'fan_out_window_ms',
  prefixTokens: 'prefix_tokens',
}

const userLengthKeys: Record<string, string> = Object.fromEntries(
  Object.entries(lengthField).map(([key, field]) => [field, key]),
)
const bucketFieldKeys: Record<string, string> = {
  weight: 'bucket_weight',
  count: 'prefix_count',
  tokens: 'prefix_tokens',
}

/** A schema path as the key the user wrote: promptTokens.min → prompt_tokens_min. */
function userKey(path: readonly PropertyKey[]): string {
  const [head, second, third] = path.map(String)
  if (head === undefined) return 'data spec'
  const length = userLengthKeys[head]
  if (length) return second === undefined || second === 'avg' ? length : `${length}_${second}`
  if (head === 'fanOut') return fanOutKeys[second ?? ''] ?? 'fan_out'
  if (head === 'prefixBuckets')
    return `prefix_buckets[${second ?? ''}]${third ? `.${bucketFieldKeys[third] ?? third}` : ''}`
  return head
}

const bucketKeys = new Set(['bucket_weight', 'prefix_count', 'prefix_tokens'])

function parseBuckets(value: unknown): Record<string, unknown>[] {
  if (!Array.isArray(value))
    throw new KinfError('invalid_request', 'data spec: prefix_buckets must be a list of buckets')
  return value.map((bucket: unknown, i) => {
    if (typeof bucket !== 'object' || bucket === null || Array.isArray(bucket))
      throw new KinfError('invalid_request', `data spec: prefix_buckets[${i}] is not an object`)
    const fields = bucket as Record<string, unknown>
    const unknown = Object.keys(fields).filter((key) => !bucketKeys.has(key))
    if (unknown.length > 0)
      throw new KinfError(
        'invalid_request',
        `data spec: prefix_buckets[${i}] has unknown key ${unknown.join(', ')} (bucket_weight, prefix_count, prefix_tokens)`,
      )
    return {
      ...(fields.bucket_weight !== undefined && { weight: fields.bucket_weight }),
      ...(fields.prefix_count !== undefined && { count: fields.prefix_count }),
      ...(fields.prefix_tokens !== undefined && { tokens: fields.prefix_tokens }),
    }
  })
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new Error('not an object')
    return value as Record<string, unknown>
  } catch (error) {
    throw new KinfError(
      'invalid_request',
      `data spec: not valid JSON (${(error as Error).message})`,
    )
  }
}

function parsePairs(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [key, value, extra] = part.split('=')
    const number = Number(value)
    if (
      !key ||
      value === undefined ||
      extra !== undefined ||
      value.trim() === '' ||
      !Number.isFinite(number)
    ) {
      throw new KinfError('invalid_request', `data spec: "${part}" is not key=number`)
    }
    out[key.trim()] = number
  }
  return out
}

/** A sampler of one length distribution, GuideLLM's IntegerRangeSampler. */
export function lengthSampler(spec: LengthSpec, random: () => number): () => number {
  const stdev = spec.stdev ?? 0
  if (stdev > 0) {
    const low = spec.min ?? Math.max(1, spec.avg - 5 * stdev)
    const high = spec.max ?? spec.avg + 5 * stdev
    return () => {
      const u = Math.max(random(), Number.MIN_VALUE)
      const gaussian = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random())
      return Math.round(Math.min(high, Math.max(low, spec.avg + stdev * gaussian)))
    }
  }
  if (spec.min !== undefined || spec.max !== undefined) {
    const low = spec.min ?? spec.avg
    const high = spec.max ?? spec.avg
    return () => low + Math.floor(random() * (high - low + 1))
  }
  return () => spec.avg
}
