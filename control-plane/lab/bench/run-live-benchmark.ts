import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import { parseOptions } from '../../../shared/config/parse-options.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { describeProfile, type LoadProfile, rateOfProfile, streamsOf } from './load-profile.ts'
import { openLoopSchedule } from './open-loop-schedule.ts'
import type { BenchmarkRun, RequestRecord } from './request-record.ts'
import { type StreamedChatTarget, sendStreamedChat } from './send-streamed-chat.ts'
import type { Workload } from './workload.ts'

const timeoutError = 'must be a number of ms in (0, 2^31)'
const timeScaleError = 'must be a number > 0'

/**
 * How the live run keeps time, defaults included. A plain object, not strict: it is read
 * out of the whole LiveBenchmarkOptions.
 */
export const LiveBenchmarkTimingOptions = z.object({
  // setTimeout takes up to 2^31 - 1 ms; past that it fires at once.
  timeoutMs: z
    .number({ error: timeoutError })
    .gt(0, { error: timeoutError })
    .max(2 ** 31 - 1, { error: timeoutError })
    .default(300_000)
    .describe('Per request, from sending to the end of the stream (5 minutes)'),
  // The schedule is compressed by it and every recorded time stretched by it, so the run
  // reads in modelled milliseconds, like the discrete-event one.
  timeScale: z
    .number({ error: timeScaleError })
    .gt(0, { error: timeScaleError })
    .default(1)
    .describe(
      'The target runs this many times faster than the modelled GPU (pods with --time-scale)',
    ),
})
export type LiveBenchmarkTimingOptions = z.infer<typeof LiveBenchmarkTimingOptions>
export type LiveBenchmarkTimingOptionsInput = z.input<typeof LiveBenchmarkTimingOptions>

export interface LiveBenchmarkOptions extends LiveBenchmarkTimingOptionsInput {
  /** Base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:9000 (a trailing /v1 is fine). */
  target: string
  /** Sent as `model`; null leaves the field out (the server's default model). */
  model: string | null
  workload: Workload
  profile: LoadProfile
  /** Requests to send; every turn of a conversation is one (GuideLLM's max_requests). */
  maxRequests: number
  /** Token ids to text (the model's tokenizer). */
  decode: (ids: readonly number[]) => string
  routerLabel: string
  workloadName: string
  dataSpec: string
  pods: number
  gpuProfile: string
  seed: number
  /** Extra request headers (authorization, ...). */
  headers?: Record<string, string>
  /** The pods' prefix-cache counters (tokens) once the run is over, when the caller can read them. */
  readPrefixCache?: () => Promise<{ queries: number; hits: number } | null>
  /** Called with the number of finished requests after each one finishes. */
  onProgress?: (done: number) => void
}

function parseLiveBenchmarkTiming(input: LiveBenchmarkTimingOptionsInput) {
  return parseOptions(LiveBenchmarkTimingOptions, input, 'live benchmark')
}

interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/**
 * The benchmark generator over HTTP against any OpenAI-compatible endpoint: streamed
 * chat completions (`stream_options.include_usage`, `max_tokens` = the turn's output
 * length, `ignore_eos`), the conversation's prefix as the system message and each turn's
 * words as the user message. A conversation's turns go one after the other on one client
 * stream, each carrying the real history (the answers as received). Open loop (constant,
 * poisson, trace): a conversation starts at each time of openLoopSchedule (seeded with
 * seed + 11, as the discrete-event run does) while fewer than maxRequests requests were
 * sent. Closed loop (synchronous, concurrent, throughput): that many streams each take
 * the next conversation when the last one ends. A failed turn ends its conversation.
 * Failures are records with `error` set; the run always completes.
 */
export async function runLiveBenchmark(options: LiveBenchmarkOptions): Promise<BenchmarkRun> {
  const wallStart = performance.now()
  const timing = parseLiveBenchmarkTiming(options)
  const scale = timing.timeScale
  // Milliseconds since the start, in the target's modelled time.
  const now = () => (performance.now() - wallStart) * scale
  const base = options.target.replace(/\/+$/, '').replace(/\/v1$/, '')
  const url = new URL(`${base}/v1/chat/completions`)
  const agentOptions = { keepAlive: true, maxSockets: Number.POSITIVE_INFINITY }
  const agent =
    url.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions)
  const target: StreamedChatTarget = {
    url,
    agent,
    headers: options.headers ?? {},
    timeoutMs: timing.timeoutMs,
    now,
  }
  const records: RequestRecord[] = []
  // A trace slice can hold fewer requests than asked for (it skips what does not fit).
  const maxRequests = Math.min(
    options.maxRequests,
    options.workload.size ?? Number.POSITIVE_INFINITY,
  )
  const prefixTexts = new Map<string, string>()
  let sent = 0
  let nextConversation = 0

  const runConversation = async (index: number) => {
    const plan = options.workload.conversation(index)
    const messages: ChatMessage[] = []
    if (plan.prefix !== null) {
      const { key, ids } = plan.prefix
      let text = prefixTexts.get(key)
      if (text === undefined) {
        text = options.decode(ids)
        prefixTexts.set(key, text)
      }
      messages.push({ role: 'system', content: text })
    }
    for (let turn = 0; turn < plan.turns.length; turn++) {
      if (sent >= maxRequests) return
      sent++
      const planned = plan.turns[turn] as (typeof plan.turns)[number]
      messages.push({ role: 'user', content: options.decode(planned.userIds) })
      const body = JSON.stringify({
        ...(options.model !== null && { model: options.model }),
        messages,
        max_tokens: planned.outputTokens,
        stream: true,
        stream_options: { include_usage: true },
        ignore_eos: true,
      })
      const result = await sendStreamedChat(target, body)
      records.push({
        id: `c${index}t${turn}`,
        conversation: index,
        turn,
        startMs: result.startMs,
        firstTokenMs: result.tokenTimesMs[0] ?? null,
        tokenTimesMs: result.tokenTimesMs,
        endMs: result.endMs,
        promptTokens: result.promptTokens,
        outputTokens: result.outputTokens,
        cachedTokens: result.cachedTokens,
        pod: result.pod,
        error: result.error,
      })
      options.onProgress?.(records.length)
      if (result.error !== null) return
      messages.push({ role: 'assistant', content: result.text })
    }
  }

  try {
    const streams = streamsOf(options.profile)
    if (streams === null) {
      const origin = now()
      const schedule = openLoopSchedule(
        options.profile,
        options.workload,
        maxRequests,
        createSeededRandom(options.seed + 11),
      )
      const running: Promise<void>[] = []
      for (const { atMs, conversation } of schedule) {
        if (sent >= maxRequests) break
        const wait = (origin + atMs - now()) / scale
        if (wait >= 1) await sleep(wait)
        if (sent >= maxRequests) break
        running.push(runConversation(conversation))
      }
      await Promise.all(running)
    } else {
      const stream = async () => {
        while (sent < maxRequests) await runConversation(nextConversation++)
      }
      await Promise.all(Array.from({ length: Math.min(streams, Math.max(0, maxRequests)) }, stream))
    }
  } finally {
    agent.destroy()
  }

  records.sort((a, b) => a.startMs - b.startMs)
  const startMs = records[0]?.startMs ?? now()
  const endMs = records.reduce((last, record) => Math.max(last, record.endMs), startMs)
  return {
    config: {
      mode: 'live',
      router: options.routerLabel,
      workload: options.workloadName,
      profile: describeProfile(options.profile),
      rate: rateOfProfile(options.profile),
      pods: options.pods,
      gpuProfile: options.gpuProfile,
      seed: options.seed,
      dataSpec: options.dataSpec,
    },
    startMs,
    endMs,
    records,
    prefixCache: (await options.readPrefixCache?.()) ?? null,
    skippedRequests: options.workload.skipped,
    elapsedSeconds: (performance.now() - wallStart) / 1000,
  }
}
