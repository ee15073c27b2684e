import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import { functionOption, parseOptions } from '../../../shared/config/parse-options.ts'
import { parseCountTokensBody } from './count-tokens-body.ts'
import { eventStreamFrame } from './event-stream-frame.ts'
import {
  type FaultCounters,
  fakeBedrockErrors,
  parseFakeBedrockFaults,
} from './fake-bedrock-fault.ts'
import { fakeInputTokens } from './fake-input-tokens.ts'
import { type FakeRequest, listenHttp1AndH2 } from './listen-http1-and-h2.ts'
import { moveToCache, planFakeReply } from './plan-fake-reply.ts'
import {
  type FakeBedrockProcessed,
  type FakeClock,
  type FakeResponse,
  serveFakeConverse,
} from './serve-fake-converse.ts'
import { validateConverseBody } from './validate-converse-body.ts'

export type { FakeBedrockProcessed } from './serve-fake-converse.ts'

export const FakeBedrockOptions = z.strictObject({
  port: z
    .int({ error: 'must be a port number' })
    .min(0, { error: 'must be a port number' })
    .max(65_535, { error: 'must be a port number' })
    .default(0)
    .describe('0: a free port'),
  host: z.string().default('127.0.0.1').describe('Loopback unless told otherwise'),
  now: functionOption<FakeClock['now']>()
    .optional()
    .describe(
      'Milliseconds for paced output (pace:R); performance.now unless a test passes its own',
    ),
  sleep: functionOption<FakeClock['sleep']>()
    .optional()
    .describe('The wait of paced output and delay:ms; a timer unless a test passes its own'),
})
export type FakeBedrockOptions = z.infer<typeof FakeBedrockOptions>
export type FakeBedrockOptionsInput = z.input<typeof FakeBedrockOptions>

/** What the fake saw of one request, for tests to assert on. */
export interface FakeBedrockRequest {
  operation: 'converse' | 'converse-stream' | 'count-tokens'
  modelId: string
  httpVersion: string
  headers: Record<string, string | string[] | undefined>
  body: unknown
  requestId: string
  status: number
  /** The client went away before the answer was complete. */
  aborted: boolean
}

export interface FakeBedrock {
  url: string
  requests: FakeBedrockRequest[]
  /** Per Converse or ConverseStream call the model ran (no error before it), in order. */
  processed: FakeBedrockProcessed[]
  /**
   * Fault specs applied to every request from now on, besides its header's and model id's
   * (parseFakeBedrockFaults' grammar): a storm a test starts and ends; [] ends it.
   */
  setFaults(specs: readonly string[]): void
  close(): Promise<void>
}

const route = /^\/model\/([^/]+)\/(converse|converse-stream|count-tokens)$/
/** The shape of a SigV4 Authorization header; the signature itself is not checked. */
const sigV4 =
  /^AWS4-HMAC-SHA256 Credential=[^/\s]+\/\d{8}\/[a-z0-9-]+\/bedrock\/aws4_request, ?SignedHeaders=[a-z0-9;:-]+, ?Signature=[0-9a-f]{64}$/
const maxBodyBytes = 8 * 1024 * 1024

async function readJson(req: FakeRequest): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > maxBodyBytes) throw new Error('request body too large')
    chunks.push(chunk)
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

/**
 * A local stand-in for the Bedrock Runtime Converse API, for tests and demos: JSON for
 * /converse and /count-tokens (CountTokens), real application/vnd.amazon.eventstream
 * frames for /converse-stream. Speaks HTTP/1.1 and cleartext HTTP/2 on one port (the
 * SDK's Node client uses HTTP/2). Answers are deterministic (see planFakeReply), tokens
 * are counted by one rule (fakeInputTokens); faults, long and paced answers are chosen per
 * request (see parseFakeBedrockFaults). `processed` records what the model generated.
 */
export async function startFakeBedrock(input: FakeBedrockOptionsInput = {}): Promise<FakeBedrock> {
  const options = parseOptions(FakeBedrockOptions, input, 'fake bedrock')
  const requests: FakeBedrockRequest[] = []
  const processed: FakeBedrockProcessed[] = []
  const clock: FakeClock = {
    now: options.now ?? (() => performance.now()),
    // A timer longer than 2^31 - 1 ms fires at once in Node: a very slow pace is capped.
    sleep:
      options.sleep ??
      ((ms, signal) => sleep(Math.min(ms, 2 ** 31 - 1), undefined, { signal }).catch(() => {})),
  }
  const counters: FaultCounters = new Map()
  const cachedPrefixes = new Set<string>()
  let serverFaults: readonly string[] = []

  const handle = async (req: FakeRequest, res: FakeResponse) => {
    const requestId = `fa4eb0c0-0000-4000-8000-${String(requests.length + 1).padStart(12, '0')}`
    const send = (status: number, body: unknown, errorType?: string) => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-amzn-requestid': requestId,
      }
      if (errorType)
        headers['x-amzn-errortype'] =
          `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`
      res.writeHead(status, headers)
      res.end(JSON.stringify(body))
      return status
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    // For tests that run where this object is out of reach (inside workerd): how many
    // Converse calls arrived, and what the model processed. Not Bedrock APIs.
    if (req.method === 'GET' && path.startsWith('/__fake/')) {
      const converse = requests.filter((r) => r.operation !== 'count-tokens')
      const views: Record<string, unknown> = {
        '/__fake/requests': { count: converse.length },
        '/__fake/processed': { processed },
      }
      if (Object.hasOwn(views, path)) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(views[path]))
        return
      }
    }
    const match = route.exec(path)
    if (req.method !== 'POST' || !match) {
      send(404, { message: `no route for ${req.method} ${req.url}` }, 'UnknownOperationException')
      return
    }
    const operation = match[2] as FakeBedrockRequest['operation']
    const modelId = decodeURIComponent(match[1] ?? '')
    const record: FakeBedrockRequest = {
      operation,
      modelId,
      httpVersion: req.httpVersion,
      headers: { ...req.headers },
      body: undefined,
      requestId,
      status: 0,
      aborted: false,
    }
    requests.push(record)
    const requestNumber = requests.length
    const gone = new AbortController()
    res.on('close', () => {
      // HTTP/2 reports a stream the client reset (RST_STREAM CANCEL) as finished.
      const reset = res.stream !== undefined && res.stream.rstCode !== 0
      if (!res.writableFinished || reset) {
        record.aborted = true
        gone.abort()
      }
    })
    const authorization = req.headers.authorization
    if (typeof authorization !== 'string') {
      record.status = send(
        403,
        { message: 'Missing Authentication Token' },
        'MissingAuthenticationTokenException',
      )
      return
    }
    if (!sigV4.test(authorization)) {
      record.status = send(
        400,
        { message: 'Authorization header is not a SigV4 signature' },
        'IncompleteSignatureException',
      )
      return
    }
    try {
      record.body = await readJson(req)
    } catch (error) {
      record.status = send(
        400,
        { message: `Malformed input request: ${(error as Error).message}` },
        'ValidationException',
      )
      return
    }
    const header = req.headers['x-fake-bedrock-fault']
    let faults: ReturnType<typeof parseFakeBedrockFaults>
    try {
      faults = parseFakeBedrockFaults(
        [
          ...serverFaults,
          ...modelId.split('+').slice(1),
          ...(typeof header === 'string' ? header.split(',') : []),
        ],
        modelId,
        counters,
      )
    } catch (error) {
      record.status = send(400, { message: (error as Error).message }, 'ValidationException')
      return
    }
    const injected = faults.error === undefined ? undefined : fakeBedrockErrors[faults.error]
    if (injected && !(faults.error === 'stream-throttle' && operation === 'converse-stream')) {
      record.status = send(injected.status, { message: injected.message }, injected.type)
      return
    }
    if (operation === 'count-tokens') {
      if (faults.countTokensUnsupported) {
        const message = "The provided model doesn't support counting tokens."
        record.status = send(400, { message }, 'ValidationException')
        return
      }
      const counted = parseCountTokensBody(record.body)
      if (faults.delayMs) await clock.sleep(faults.delayMs, gone.signal)
      if (gone.signal.aborted) return
      record.status =
        typeof counted === 'string'
          ? send(400, { message: counted }, 'ValidationException')
          : send(200, { inputTokens: fakeInputTokens(counted).total })
      return
    }
    const request = validateConverseBody(record.body)
    if (typeof request === 'string') {
      record.status = send(400, { message: request }, 'ValidationException')
      return
    }
    if (injected) {
      record.status = 200
      res.writeHead(200, {
        'content-type': 'application/vnd.amazon.eventstream',
        'x-amzn-requestid': requestId,
      })
      res.end(eventStreamFrame('exception', 'throttlingException', { message: injected.message }))
      return
    }
    const reply = planFakeReply(request, requestNumber, cachedPrefixes, faults.answerWords)
    if (faults.stopReason) reply.stopReason = faults.stopReason
    moveToCache(reply.usage, faults.cacheRead, 'cacheReadInputTokens')
    moveToCache(reply.usage, faults.cacheWrite, 'cacheWriteInputTokens')
    const cacheRead = reply.usage.cacheReadInputTokens ?? 0
    const cacheWrite = reply.usage.cacheWriteInputTokens ?? 0
    const entry: FakeBedrockProcessed = {
      requestNumber,
      requestId,
      modelId,
      operation,
      inputTokens: reply.usage.inputTokens + cacheRead + cacheWrite,
      cacheReadInputTokens: cacheRead,
      cacheWriteInputTokens: cacheWrite,
      outputTokens: 0,
      completed: false,
    }
    processed.push(entry)
    await serveFakeConverse(res, {
      operation,
      requestId,
      reply,
      faults,
      processed: entry,
      clock,
      gone: gone.signal,
      send,
      record,
    })
  }
  const onRequest = (req: FakeRequest, res: FakeResponse) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, {
          'content-type': 'application/json',
          'x-amzn-errortype': 'InternalServerException',
        })
        res.end(JSON.stringify({ message: String(error) }))
      } else res.destroy()
    })
  }

  const listening = await listenHttp1AndH2(onRequest, options.port, options.host)
  return {
    url: listening.url,
    requests,
    processed,
    setFaults(specs) {
      parseFakeBedrockFaults(specs, 'check', new Map())
      serverFaults = [...specs]
    },
    close: () => listening.close(),
  }
}
