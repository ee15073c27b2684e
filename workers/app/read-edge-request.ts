import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { RequestLabel } from '../../shared/crd/policy-match.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { canAssembleFromStream } from '../../shared/openai/can-assemble-from-stream.ts'
import type {
  ChatCompletionRequest,
  CompletionRequest,
} from '../../shared/openai/chat-completion-request.ts'
import {
  estimateRequestPromptTokens,
  sequencesOf,
} from '../../shared/openai/estimate-request-tokens.ts'
import { checkJsonDepth } from '../../shared/openai/json-depth.ts'
import {
  maxTokensOf,
  type OpenAiRequest,
  parseOpenAiRequest,
  type RequestKind,
} from '../../shared/openai/openai-request.ts'
import { unallowedVllmField } from '../../shared/openai/vllm-only-fields.ts'
import {
  type CompiledCustomPattern,
  compileCustomPatterns,
} from '../../shared/pii/custom-pii-patterns.ts'
import { detectPii } from '../../shared/pii/detect-pii.ts'
import { scanRequestPii } from '../../shared/pii/scan-request-pii.ts'
import { findTenant } from '../../shared/policy/find-tenant.ts'
import { kinferenceHeaders } from '../../shared/protocol/kinference-headers.ts'
import { resolveTenant } from '../../shared/tenancy/resolve-tenant.ts'
import { EdgeLimits } from './edge-deps.ts'
import type { EdgeMetrics } from './edge-metrics.ts'
import { providerViews } from './provider-views.ts'
import { checkRequestCounts, checkRequestTokens } from './request-limits.ts'

/** A request the edge has authenticated, parsed and labelled. */
export interface EdgeRequest {
  kind: RequestKind
  /** The parsed request, told apart by its API. */
  openAi: OpenAiRequest
  tenant: string
  keyId: string
  /** The parsed body, unknown fields kept (they go upstream as sent). */
  body: ChatCompletionRequest | CompletionRequest
  /** The body as it arrived: forwarded as is when nothing in it changes. */
  text: string
  model: string
  stream: boolean
  /** The client asked for usage in the stream. */
  includeUsage: boolean
  /** The client asked for usage on every chunk (continuous_usage_stats). */
  continuousUsage: boolean
  /**
   * The client asked for one JSON answer, which the edge asks its upstream for as a stream
   * and assembles (shared/openai/create-completion-assembler.ts), so that it knows what a
   * client who leaves half-way used; false when the request is one a stream cannot answer.
   */
  assembled: boolean
  maxTokens: number | null
  /** Sequences generated, each up to maxTokens (`n`, or completions' best_of). */
  sequences: number
  /** The edge's estimate: messages and tool definitions (estimate-request-tokens.ts). */
  promptTokens: number
  labels: string[]
  /**
   * Policy must treat the request as carrying every constrained label (fail closed): a
   * detector failed, or part of what would leave could not be read (`unreadable`).
   */
  detectorFailed: boolean
  /** What the PII scan could not read (an image, binary data), for the refusal; or null. */
  unreadable: string | null
  /** The client's TTFT objective (x-kinference-slo-ttft-ms, shared/policy/read-objective-header.ts); absent: none. */
  sloTtftMs?: number
}

/** An OpenAI `invalid_request_error` naming the parameter. */
export function invalidRequest(message: string, param: string | null = null): KinfError {
  return new KinfError('invalid_request', message, { param })
}

/** A body's JSON, 400 in OpenAI's words when it is not JSON or nests past the limit. */
export function parseBodyJson(text: string, limits: Pick<EdgeLimits, 'maxJsonDepth'>): unknown {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw invalidRequest(
      `We could not parse the JSON body of your request: ${(error as Error).message}`,
    )
  }
  checkJsonDepth(json, limits.maxJsonDepth)
  return json
}

/** Authentication: 401 in OpenAI's words for a missing, malformed or unknown key. */
export async function authenticate(
  snapshot: ConfigSnapshot,
  authorization: string | undefined,
): Promise<{ tenant: string; keyId: string }> {
  const raw = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined
  const resolved = await resolveTenant(snapshot, raw)
  if ('tenant' in resolved) return resolved
  const message = {
    missing:
      'You didn’t provide an API key. Provide it in the Authorization header (Authorization: Bearer kinf_<id>_<secret>).',
    malformed: 'Incorrect API key provided: expected kinf_<id>_<secret>.',
    unknown: 'Incorrect API key provided.',
  }[resolved.error]
  throw new KinfError('unauthorized', message, { openAiCode: 'invalid_api_key' })
}

/** Reads at most `limit` bytes of body: 413 beyond it, whatever Content-Length says. */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? '0')
  if (declared > limit) throw new KinfError('payload_too_large', `request body over ${limit} bytes`)
  if (!request.body) return ''
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read().catch((error: unknown) => {
      // The client went away or the server's requestTimeout cut it: not the edge's fault.
      throw new KinfError('invalid_request', 'the request body was cut off before its end', {
        status: 408,
        cause: error,
      })
    })
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel()
      throw new KinfError('payload_too_large', `request body over ${limit} bytes`)
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
  } catch {
    throw invalidRequest('the request body is not valid UTF-8')
  }
}

const patternsBySnapshot = new WeakMap<ConfigSnapshot, Map<string, CompiledCustomPattern[]>>()

/** The policy's custom PII patterns, compiled once per snapshot. */
function customPatterns(snapshot: ConfigSnapshot, tenant: string): CompiledCustomPattern[] {
  const policyId = snapshot.tenants[tenant]
  if (policyId === undefined) return []
  let byPolicy = patternsBySnapshot.get(snapshot)
  if (!byPolicy) {
    byPolicy = new Map()
    patternsBySnapshot.set(snapshot, byPolicy)
  }
  let compiled = byPolicy.get(policyId)
  if (!compiled) {
    compiled = compileCustomPatterns(snapshot.policies[policyId]?.spec.pii?.patterns ?? [])
    byPolicy.set(policyId, compiled)
  }
  return compiled
}

const defaultLimits = EdgeLimits.parse({})

/**
 * Parses and labels a chat or completions body. Labels are the client's (validated) plus
 * what the detectors find; a detector that throws marks the request, which policy then
 * treats as carrying every constrained label (fail closed), and is counted. A body past
 * the limits (messages, tools, stop, max_tokens, the context) is refused before the scan.
 */
export function readEdgeRequest(
  snapshot: ConfigSnapshot,
  kind: RequestKind,
  identity: { tenant: string; keyId: string },
  text: string,
  clientLabels: string | undefined,
  metrics: EdgeMetrics,
  detect: typeof detectPii = detectPii,
  limits: EdgeLimits = defaultLimits,
): EdgeRequest {
  const json = parseBodyJson(text, limits)
  const parsed = parseOpenAiRequest(kind, json)
  if ('issues' in parsed) throw invalidRequest(parsed.issues.message, parsed.issues.param)
  const openAi = parsed.request
  const body = openAi.body
  if (body.model === undefined) throw invalidRequest('you must provide a model parameter', 'model')
  checkVllmFields(snapshot, identity.tenant, body)
  checkRequestCounts(openAi, limits)
  const labels = clientLabelsOf(clientLabels)
  const promptTokens = estimateRequestPromptTokens(openAi)
  const maxTokens = maxTokensOf(openAi)
  checkRequestTokens(snapshot, { openAi, model: body.model, promptTokens, maxTokens }, limits)
  // Everything that could leave: the body as the pods get it, and what each provider
  // would be sent, read whole (shared/pii/collect-scan-texts.ts).
  const scanned = [json, ...providerViews(snapshot, openAi)]
  const { detectorFailed, unreadable } = labelPii(snapshot, identity.tenant, scanned, {
    text,
    labels,
    metrics,
    detect,
  })
  return {
    kind,
    openAi,
    ...identity,
    body,
    text,
    model: body.model,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
    continuousUsage: body.stream_options?.continuous_usage_stats === true,
    assembled: canAssembleFromStream(openAi),
    maxTokens,
    sequences: sequencesOf(openAi),
    promptTokens,
    labels: [...labels].sort(),
    detectorFailed: detectorFailed || unreadable !== null,
    unreadable,
  }
}

/**
 * Runs the PII scan over `values` (the request and what would leave of it), adding what it
 * finds to `labels`, counted. A detector that throws is a value (detectorFailed, counted),
 * for policy to fail closed on; what could not be read is the scan's, unless the caller
 * already knows some (`unreadable`, token ids say).
 */
export function labelPii(
  snapshot: ConfigSnapshot,
  tenant: string,
  values: readonly unknown[],
  scan: {
    text: string
    labels: Set<string>
    metrics: EdgeMetrics
    detect: typeof detectPii
    unreadable?: string | null
  },
): { detectorFailed: boolean; unreadable: string | null } {
  let detectorFailed = false
  let unreadable = scan.unreadable ?? null
  try {
    const found = scanRequestPii(values, {
      budget: scanBudget(scan.text),
      custom: customPatterns(snapshot, tenant),
      detect: scan.detect,
    })
    for (const label of found.labels) {
      scan.labels.add(label)
      scan.metrics.inc('pii_detected', { label })
    }
    unreadable ??= found.unreadable
  } catch {
    detectorFailed = true
    scan.metrics.inc('pii_detector_failures')
  }
  if (unreadable !== null) scan.metrics.inc('pii_unreadable')
  return { detectorFailed, unreadable }
}

/**
 * A vLLM-only field (shared/openai/vllm-only-fields.ts) reaches the pods only when the
 * tenant's policy lists it: otherwise a 400 naming it, so that no tenant reorders vLLM's
 * queue (priority) or reaches its KV transfer without the operator's say.
 */
export function checkVllmFields(
  snapshot: ConfigSnapshot,
  tenant: string,
  body: Readonly<Record<string, unknown>>,
): void {
  const allowed = findTenant(snapshot, tenant)?.tenant.vllmFields ?? []
  const field = unallowedVllmField(body, allowed)
  if (field === null) return
  throw new KinfError(
    'invalid_request',
    `${field} is a vLLM option this gateway does not pass on for your key; its operator may allow it in the tenant's vllmFields`,
    { param: field, openAiCode: 'unsupported_parameter' },
  )
}

/** The client's own labels (x-kinference-labels), each checked. */
export function clientLabelsOf(header: string | undefined): Set<string> {
  const labelsHeader = kinferenceHeaders.labels
  const labels = new Set<string>()
  for (const label of (header ?? '')
    .split(',')
    .map((l) => l.trim())
    .filter(Boolean)) {
    if (!RequestLabel.safeParse(label).success)
      throw invalidRequest(
        `${labelsHeader}: "${label.slice(0, 64)}" is not a valid label`,
        labelsHeader,
      )
    labels.add(label)
  }
  return labels
}

/**
 * What the scan may read in all, decoded text included: four times the body (decoding
 * shrinks base64 and escapes, so honest requests stay far below), past which the rest is
 * unreadable and the request fails closed.
 */
function scanBudget(text: string): number {
  return 4 * text.length + 65_536
}
