/**
 * Fault injection for the fake Bedrock, chosen per request by the header
 * `x-fake-bedrock-fault: a,b` or by `+`-separated suffixes of the model id
 * (`fake.echo+throttle-once+delay:20`), so tests that only control the model id (the real
 * SDK behind callBedrock) can reach every path. Grammar, one spec each:
 *
 *   <error>            always answer that error
 *   <error>-once       the first request for this model id (per server) gets it, then none
 *   <error>-first:N    the first N requests for this model id get it
 *   <error>-every:N    one request in N for this model id gets it: the 1st, the N+1th, ...
 *   stream-error-after:N  converse-stream: N events, then a modelStreamErrorException
 *   stop:<reason>      end with this stopReason (content_filtered, guardrail_intervened, ...)
 *   delay:<ms>         wait this long before the answer (CountTokens' too) and before each
 *                      stream event
 *   cache-read:N       report N of the input tokens as read from the prompt cache
 *   cache-write:N      report N of the input tokens as written to it
 *   words:N            a text answer of exactly N words (1 to 1,000,000), for long answers
 *   pace:R             generate R output tokens a second (R > 0, fractions allowed): a stream
 *                      sends each word as it is generated, Converse answers once all are
 *                      generated; a client that leaves stops the generation (see `processed`)
 *   no-count-tokens    CountTokens answers that the model does not support it, as Bedrock
 *                      does for such models (Converse is unaffected)
 *
 * <error> is one of the keys of `fakeBedrockErrors`. `stream-throttle` is a
 * throttlingException sent inside a 200 event stream, before any event.
 */
export const fakeBedrockErrors = {
  throttle: {
    status: 429,
    type: 'ThrottlingException',
    message: 'Too many requests, please wait before trying again.',
  },
  'not-ready': {
    status: 429,
    type: 'ModelNotReadyException',
    message: 'Model is not ready to serve inference requests.',
  },
  unavailable: {
    status: 503,
    type: 'ServiceUnavailableException',
    message: 'Bedrock is unable to process your request.',
  },
  internal: {
    status: 500,
    type: 'InternalServerException',
    message: 'The server encountered an internal error.',
  },
  validation: {
    status: 400,
    type: 'ValidationException',
    message: 'The provided request is not valid (injected fault).',
  },
  'access-denied': {
    status: 403,
    type: 'AccessDeniedException',
    message: "You don't have access to the model with the specified model ID.",
  },
  'not-found': {
    status: 404,
    type: 'ResourceNotFoundException',
    message: 'The provided model identifier is invalid.',
  },
  'model-timeout': {
    status: 408,
    type: 'ModelTimeoutException',
    message: 'Model has timed out in processing the request.',
  },
  'model-error': {
    status: 424,
    type: 'ModelErrorException',
    message: 'The model returned an error.',
  },
  'stream-throttle': {
    status: 429,
    type: 'ThrottlingException',
    message: 'Too many requests, please wait before trying again.',
  },
} as const
export type FakeBedrockErrorKind = keyof typeof fakeBedrockErrors

export interface FakeBedrockFaults {
  /** The error this request gets, if any (counting already applied). */
  error?: FakeBedrockErrorKind
  streamErrorAfter?: number
  stopReason?: string
  delayMs?: number
  cacheRead?: number
  cacheWrite?: number
  answerWords?: number
  /** Output tokens generated a second; unset: all at once. */
  pace?: number
  countTokensUnsupported?: boolean
}

/** How many requests each (model id, spec) has seen, for -once and -first:N. */
export type FaultCounters = Map<string, number>

function isErrorKind(value: string): value is FakeBedrockErrorKind {
  return Object.hasOwn(fakeBedrockErrors, value)
}

function count(text: string, spec: string): number {
  const n = Number(text)
  if (!Number.isInteger(n) || n < 0) throw new Error(`fault ${spec}: ${text} is not a count`)
  return n
}

/** Words of a long answer at most: the whole answer is planned in memory. */
const maxAnswerWords = 1_000_000

function rate(text: string, spec: string): number {
  const r = Number(text)
  if (text.trim() === '' || !Number.isFinite(r) || r <= 0) {
    throw new Error(`fault ${spec}: not a positive number of tokens a second`)
  }
  return r
}

/** The faults for one request; throws an Error naming the bad spec (answered as a 400). */
export function parseFakeBedrockFaults(
  specs: readonly string[],
  modelId: string,
  counters: FaultCounters,
): FakeBedrockFaults {
  const faults: FakeBedrockFaults = {}
  for (const spec of specs.map((s) => s.trim()).filter((s) => s !== '')) {
    const colon = spec.indexOf(':')
    const head = colon < 0 ? spec : spec.slice(0, colon)
    const arg = spec.slice(colon + 1)
    if (head === 'stream-error-after') faults.streamErrorAfter = count(arg, spec)
    else if (head === 'stop') faults.stopReason = arg
    else if (head === 'delay') faults.delayMs = count(arg, spec)
    else if (head === 'cache-read') faults.cacheRead = count(arg, spec)
    else if (head === 'cache-write') faults.cacheWrite = count(arg, spec)
    else if (head === 'words') {
      const words = count(arg, spec)
      if (words < 1 || words > maxAnswerWords) {
        throw new Error(`fault ${spec}: an answer is 1 to ${maxAnswerWords} words`)
      }
      faults.answerWords = words
    } else if (head === 'pace') faults.pace = rate(arg, spec)
    else if (spec === 'no-count-tokens') faults.countTokensUnsupported = true
    else {
      const limited = /^(.+?)-(once|first:(\d+)|every:(\d+))$/.exec(spec)
      const kind = limited ? (limited[1] ?? '') : spec
      if (!isErrorKind(kind)) throw new Error(`unknown fault ${spec}`)
      const every = limited?.[4] === undefined ? null : count(limited[4], spec)
      if (every === 0) throw new Error(`fault ${spec}: every 0 requests`)
      const times = limited ? (limited[3] === undefined ? 1 : count(limited[3], spec)) : Infinity
      const key = `${modelId}|${spec}`
      const seen = counters.get(key) ?? 0
      counters.set(key, seen + 1)
      if (every === null ? seen < times : seen % every === 0) faults.error = kind
    }
  }
  return faults
}
