import { readFile, stat } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { verifySnapshot } from '../../../shared/config/compile-snapshot.ts'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import {
  builtinTokenizers,
  tokenizerSourceProblem,
} from '../../../shared/crd/builtin-tokenizers.ts'
import { RequestLabel } from '../../../shared/crd/policy-match.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import {
  type OpenAiRequest,
  parseOpenAiRequest,
  type RequestKind,
} from '../../../shared/openai/openai-request.ts'
import { promptText } from '../../../shared/openai/prompt-text.ts'
import { compileCustomPatterns, detectPii } from '../../../shared/pii/detect-pii.ts'
import { decidePolicy } from '../../../shared/policy/evaluate-policy.ts'
import { findTenant } from '../../../shared/policy/find-tenant.ts'
import { interpretRequest } from '../../../shared/policy/interpret-request.ts'
import type { PolicyRequest, PoolStatus } from '../../../shared/policy/policy-decision.ts'
import { resolveModel } from '../../../shared/routing/pool-router.ts'
import { loadTokenizer } from '../../tokenizer/load-tokenizer.ts'
import { promptIds } from '../../tokenizer/prompt-ids.ts'
import type { Tokenizer } from '../../tokenizer/tokenizer.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'
import { type Explanation, formatExplanation } from '../format-explanation.ts'
import { maxFileBytes } from '../load-documents.ts'

export const explainUsage = `Usage: kinfctl explain --snapshot FILE --tenant T --model M --prompt-file FILE [options]

Evaluates the policy of a compiled config snapshot for one request, offline, and
prints the decision, the upstreams in the order they would be tried and the trace
of every rule and constraint considered. Prompt tokens are counted as the pods count
them, with the tokenizer and chat template of the pools serving the model (or the one
all the snapshot's pools share, or --tokenizer); PII labels come from the same
detectors as the edge.
Exit status: 0 decision computed (whatever it is), 1 bad snapshot or prompt file,
2 usage error.

Options:
      --snapshot FILE         snapshot written by kinfctl compile
      --tenant NAME           the (authenticated) tenant
      --model NAME            model as requested (default: the prompt file's "model")
      --prompt-file FILE|-    plain text (one user message) or an OpenAI request body
                              (JSON with "messages", or "prompt" for completions)
      --labels A,B            labels the client sends (x-kinference-labels)
      --tokenizer SOURCE      count prompt tokens with this tokenizer: a built-in name
                              (${builtinTokenizers.join(', ')}) or a Hugging Face model directory
      --pool NAME=SAT[:TTFT]  live status of a pool: saturation (1 = saturated) and
                              optionally the predicted TTFT in ms; repeatable; pools
                              not given are unknown, as when the scorer is unreachable
      --detector-failed       evaluate as if a PII detector had failed (fail closed)
  -o, --output text|json      output format (default text)
`

interface PromptFacts {
  kind: RequestKind
  model: string | undefined
  promptTokens: number
  text: string
}

export async function explainCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    allowPositionals: false,
    options: {
      snapshot: { type: 'string' },
      tenant: { type: 'string' },
      model: { type: 'string' },
      'prompt-file': { type: 'string' },
      labels: { type: 'string', default: '' },
      tokenizer: { type: 'string' },
      pool: { type: 'string', multiple: true, default: [] },
      'detector-failed': { type: 'boolean', default: false },
      output: { type: 'string', short: 'o', default: 'text' },
    },
  })
  if (values.output !== 'text' && values.output !== 'json') {
    throw new UsageError(`--output must be text or json, not "${values.output}"`)
  }
  const snapshotFile = required(values.snapshot, '--snapshot')
  const tenant = required(values.tenant, '--tenant')
  const promptFile = required(values['prompt-file'], '--prompt-file')
  const clientLabels = parseLabels(values.labels)
  const givenPools = values.pool.map(parsePoolOption)
  const tokenizerProblem =
    values.tokenizer === undefined ? null : tokenizerSourceProblem(values.tokenizer)
  if (tokenizerProblem !== null) throw new UsageError(`--tokenizer: ${tokenizerProblem}`)

  if (snapshotFile === '-' && promptFile === '-') {
    throw new UsageError('only one of --snapshot and --prompt-file can be standard input')
  }
  const snapshot = await loadSnapshot(snapshotFile, io.readStdin)
  const poolStatus = resolvePools(snapshot, givenPools)
  const promptInput = await readInput(promptFile, io.readStdin, 'prompt file')
  const prompt = readPrompt(promptInput, (model) =>
    tokenizerFor(values.tokenizer ?? chooseTokenizer(snapshot, values.model ?? model)),
  )
  const model = values.model ?? prompt.model
  if (model === undefined) throw new UsageError('--model is required (the prompt file names none)')

  const policy = findTenant(snapshot, tenant)?.policy
  let detected: string[] = []
  let detectorFailed = values['detector-failed']
  let detectorNote = detectorFailed ? 'failure simulated (--detector-failed)' : 'ok'
  try {
    const custom = compileCustomPatterns(policy?.spec.pii?.patterns ?? [])
    detected = detectPii(prompt.text, { custom }).labels
  } catch (error) {
    // As at the edge: a detector that throws counts as "might carry any label".
    detectorFailed = true
    detectorNote = `failed: ${error instanceof Error ? error.message : String(error)}`
  }
  const request: PolicyRequest = {
    tenant,
    model,
    promptTokens: prompt.promptTokens,
    labels: [...new Set([...detected, ...clientLabels])].sort(),
    detectorFailed,
  }
  const interpreted = interpretRequest(snapshot, request)
  const decision = decidePolicy(interpreted, (pool) => poolStatus.get(pool))
  const explanation: Explanation = {
    snapshot: snapshot.hash,
    request,
    detectedLabels: detected,
    clientLabels,
    detector: detectorNote,
    poolsToAsk: interpreted.pools,
    poolStatus: Object.fromEntries(poolStatus),
    decision,
  }
  io.stdout(
    values.output === 'json'
      ? `${JSON.stringify(explanation, null, 2)}\n`
      : formatExplanation(explanation),
  )
  return exitCode.ok
}

function required(value: string | undefined, option: string): string {
  if (value === undefined || value === '') throw new UsageError(`${option} is required`)
  return value
}

function parseLabels(list: string): string[] {
  const labels = list
    .split(',')
    .map((label) => label.trim())
    .filter((label) => label !== '')
  for (const label of labels) {
    if (!RequestLabel.safeParse(label).success) {
      throw new UsageError(
        `--labels: "${label}" is not a label (lower-case words, optionally group:name)`,
      )
    }
  }
  return labels
}

function parsePoolOption(option: string): { name: string; status: PoolStatus } {
  const match = /^([a-z0-9-]+(?:\/[a-z0-9-]+)?)=([0-9.]+)(?::([0-9.]+))?$/.exec(option)
  const saturation = Number(match?.[2])
  const ttft = match?.[3] === undefined ? null : Number(match[3])
  if (match?.[1] === undefined || !Number.isFinite(saturation) || Number.isNaN(ttft)) {
    throw new UsageError(
      `--pool "${option}": expected NAME=SATURATION[:TTFT_MS], e.g. qwen-27b=0.95:1200`,
    )
  }
  return {
    name: match[1],
    status: { saturation, saturated: saturation >= 1, predictedTtftMs: ttft },
  }
}

/** Pool names given without a namespace are looked up; they must name one pool. */
function resolvePools(
  snapshot: ConfigSnapshot,
  given: { name: string; status: PoolStatus }[],
): Map<string, PoolStatus> {
  const pools = new Map<string, PoolStatus>()
  for (const { name, status } of given) {
    const ids = Object.keys(snapshot.pools).filter((id) =>
      name.includes('/') ? id === name : id.endsWith(`/${name}`),
    )
    if (ids.length !== 1) {
      throw new UsageError(
        ids.length === 0
          ? `--pool: the snapshot has no pool "${name}" (it has ${Object.keys(snapshot.pools).join(', ') || 'none'})`
          : `--pool: "${name}" is ambiguous (${ids.join(', ')}); give namespace/name`,
      )
    }
    pools.set(ids[0] as string, status)
  }
  return pools
}

async function readInput(
  file: string,
  readStdin: () => Promise<string>,
  what: string,
): Promise<string> {
  if (file === '-') return readStdin()
  try {
    const info = await stat(file)
    if (info.size > maxFileBytes) {
      throw new Error(`${info.size} bytes, more than the ${maxFileBytes}-byte limit`)
    }
    return new TextDecoder('utf-8', { fatal: true }).decode(await readFile(file))
  } catch (error) {
    throw new KinfError('invalid_request', `cannot read ${what} ${file}: ${messageOf(error)}`)
  }
}

async function loadSnapshot(
  file: string,
  readStdin: () => Promise<string>,
): Promise<ConfigSnapshot> {
  const text = await readInput(file, readStdin, 'snapshot')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new KinfError('invalid_config', `snapshot ${file} is not JSON: ${messageOf(error)}`)
  }
  try {
    return await verifySnapshot(value)
  } catch (error) {
    throw new KinfError('invalid_config', `snapshot ${file}: ${messageOf(error)}`)
  }
}

/**
 * The tokenizer that counts the prompt: the pools' that serve the model as requested
 * (before any rewrite), else the one every pool of the snapshot uses; two different ones
 * need --tokenizer.
 */
function chooseTokenizer(snapshot: ConfigSnapshot, model: string | undefined): string {
  const pools = Object.values(snapshot.pools)
  const of = (serving: typeof pools) => [
    ...new Set(serving.flatMap((pool) => pool.spec.models.map((m) => m.tokenizer))),
  ]
  const serving = pools.filter(
    (pool) => model !== undefined && resolveModel(pool.spec, model) !== null,
  )
  const candidates = serving.length > 0 ? of(serving) : of(pools)
  if (candidates.length === 1) return candidates[0] as string
  throw new UsageError(
    candidates.length === 0
      ? '--tokenizer is required: the snapshot has no pool to take one from'
      : `--tokenizer is required: the pools use ${candidates.join(', ')}`,
  )
}

function tokenizerFor(source: string): Tokenizer {
  const loaded = loadTokenizer(source)
  if (!loaded.ok) throw new KinfError('invalid_config', loaded.error.message)
  return loaded.tokenizer
}

/**
 * A JSON object is an OpenAI request body; anything else is the text of one user
 * message. Tokens are counted as vLLM counts them: the chat template rendered and
 * tokenized for chat, the prompt tokenized (or its ids counted) for completions, with
 * the tokenizer `tokenizerOf` gives for the body's model.
 */
function readPrompt(
  text: string,
  tokenizerOf: (model: string | undefined) => Tokenizer,
): PromptFacts {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  const object = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : null
  const isObject = object !== null
  const kind: RequestKind | null =
    object === null
      ? 'chat'
      : 'messages' in object
        ? 'chat'
        : 'prompt' in object
          ? 'completion'
          : null
  if (kind === null) {
    throw new KinfError(
      'invalid_request',
      'prompt file: a JSON object must be an OpenAI request body, with "messages" or "prompt"',
    )
  }
  const parsed = parseOpenAiRequest(kind, object ?? { messages: [{ role: 'user', content: text }] })
  if ('issues' in parsed) {
    const issues = parsed.issues.each.map((i) => `${i.path || 'body'}: ${i.message}`)
    throw new KinfError('invalid_request', `prompt file: ${issues.join('; ')}`)
  }
  const request: OpenAiRequest = parsed.request
  const tokenizer = tokenizerOf(request.body.model)
  try {
    // The body's own text too: tool schemas' floats print as vLLM, parsing it, prints them.
    const promptTokens = promptIds(tokenizer, request, isObject ? text : null).length
    return {
      kind,
      model: request.body.model,
      promptTokens,
      text: isObject ? promptText(request) : text,
    }
  } catch (error) {
    throw new KinfError('invalid_request', `prompt file: ${messageOf(error)}`)
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
