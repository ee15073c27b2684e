import { z } from 'zod'
import { parseOptions } from '../../../../shared/config/parse-options.ts'

const positive = (what: string) =>
  z.number({ error: `must be ${what} > 0` }).gt(0, { error: `must be ${what} > 0` })
const atLeastZero = (what: string) =>
  z.number({ error: `must be ${what} >= 0` }).min(0, { error: `must be ${what} >= 0` })

/**
 * A hosted provider as the DES sees it (Bedrock's Converse behind a burst rule): a first
 * token after a base latency plus the prompt's read, then output at a steady rate, and the
 * account's quotas, requests and tokens per minute, as token buckets: a request past
 * either is throttled (Bedrock's ThrottlingException, a 429) and costs nothing. The
 * defaults are a mid-size hosted model's published ballpark, not any one account's.
 */
export const ProviderModelOptions = z.object({
  ttftBaseMs: atLeastZero('a number of ms')
    .default(450)
    .describe('First-token latency of an empty prompt: network, queueing, the first step'),
  ttftJitter: atLeastZero('a fraction')
    .default(0.25)
    .describe('Spread of that latency: its lognormal sigma'),
  msPerPromptToken: atLeastZero('a number of ms')
    .default(0.05)
    .describe('Prompt read time per token (20,000 tokens/s)'),
  outputTokensPerSecond: positive('a number of tokens/s').default(80),
  requestsPerMinute: positive('a number of requests/min')
    .default(6_000)
    .describe("The account's request quota"),
  tokensPerMinute: positive('a number of tokens/min')
    .default(4_000_000)
    .describe("The account's token quota: prompt and max output tokens, as Bedrock counts them"),
})
export type ProviderModelOptions = z.infer<typeof ProviderModelOptions>
export type ProviderModelOptionsInput = z.input<typeof ProviderModelOptions>

/** What the provider did with one request. */
export type ProviderAnswer =
  | { kind: 'throttled' }
  | { kind: 'served'; firstTokenMs: number; endMs: number }

/** A bucket that refills continuously to one minute's quota. */
class MinuteBucket {
  private level: number
  private atMs = 0
  private readonly perMinute: number

  constructor(perMinute: number) {
    this.perMinute = perMinute
    this.level = perMinute
  }

  /** Refills to `nowMs`; whether `amount` is there. */
  has(amount: number, nowMs: number): boolean {
    const refill = ((nowMs - this.atMs) * this.perMinute) / 60_000
    this.level = Math.min(this.perMinute, this.level + refill)
    this.atMs = nowMs
    return amount <= this.level
  }

  take(amount: number): void {
    this.level -= amount
  }
}

/**
 * The provider of a DES run: deterministic for its random source. It never queues: a
 * hosted model's capacity is the account's quota, so past it requests are refused, not
 * slowed.
 */
export class ProviderModel {
  private readonly options: ProviderModelOptions
  private readonly random: () => number
  private readonly requests: MinuteBucket
  private readonly tokens: MinuteBucket

  constructor(input: ProviderModelOptionsInput, random: () => number) {
    this.options = parseOptions(ProviderModelOptions, input, 'provider model')
    this.random = random
    this.requests = new MinuteBucket(this.options.requestsPerMinute)
    this.tokens = new MinuteBucket(this.options.tokensPerMinute)
  }

  send(nowMs: number, promptTokens: number, outputTokens: number): ProviderAnswer {
    const { options } = this
    // Bedrock counts a request against both quotas before it runs: the prompt and the
    // output it may write.
    const tokens = promptTokens + outputTokens
    if (!this.requests.has(1, nowMs) || !this.tokens.has(tokens, nowMs))
      return { kind: 'throttled' }
    this.requests.take(1)
    this.tokens.take(tokens)
    const ttft = options.ttftBaseMs * this.lognormal(options.ttftJitter)
    const firstTokenMs = nowMs + ttft + promptTokens * options.msPerPromptToken
    const endMs =
      firstTokenMs + (Math.max(0, outputTokens - 1) * 1000) / options.outputTokensPerSecond
    return { kind: 'served', firstTokenMs, endMs }
  }

  /** exp(sigma·z) for a standard normal z (Box–Muller), mean-corrected to 1. */
  private lognormal(sigma: number): number {
    if (sigma === 0) return 1
    const u = Math.max(this.random(), Number.MIN_VALUE)
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.random())
    return Math.exp(sigma * z - (sigma * sigma) / 2)
  }
}
