import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import {
  embeddingInputs,
  estimateEmbeddingTokens,
  type OpenAiEmbeddingRequest,
  parseOpenAiEmbedding,
} from '../../shared/openai/openai-embedding-request.ts'
import type { detectPii } from '../../shared/pii/detect-pii.ts'
import type { EdgeLimits } from './edge-deps.ts'
import type { EdgeMetrics } from './edge-metrics.ts'
import {
  checkVllmFields,
  clientLabelsOf,
  invalidRequest,
  labelPii,
  parseBodyJson,
} from './read-edge-request.ts'

/**
 * An embeddings request the edge has authenticated, parsed and labelled. Not an EdgeRequest:
 * nothing is generated, nothing streams, and no external provider serves it (Converse has
 * no embeddings), so the stages that serve completions never see one.
 */
export interface EmbeddingEdgeRequest {
  tenant: string
  keyId: string
  /** The parsed body, unknown fields kept (they go upstream as sent). */
  body: OpenAiEmbeddingRequest
  /** The body as it arrived: forwarded as is unless policy renames the model. */
  text: string
  model: string
  /** How many inputs it embeds (one engine request each on the pod). */
  inputs: number
  /** The edge's estimate of the tokens embedded, every input's (token ids exactly). */
  promptTokens: number
  labels: string[]
  /** Policy treats it as carrying every constrained label (see EdgeRequest.detectorFailed). */
  detectorFailed: boolean
  /** What the PII scan could not read, for a refusal; or null. */
  unreadable: string | null
}

/**
 * Parses and labels an embeddings body as readEdgeRequest does a completion: JSON and its
 * depth, the schema (shared/openai/openai-embedding-request.ts), the tenant's vLLM-only
 * fields, the client's labels, and the PII scan over every input. Token ids cannot be read
 * by the scan, so a request that sends some is treated as carrying every constrained label
 * (fail closed), as an image is for chat.
 */
export function readEmbeddingRequest(
  snapshot: ConfigSnapshot,
  identity: { tenant: string; keyId: string },
  text: string,
  clientLabels: string | undefined,
  metrics: EdgeMetrics,
  detect: typeof detectPii,
  limits: Pick<EdgeLimits, 'maxJsonDepth'>,
): EmbeddingEdgeRequest {
  const json = parseBodyJson(text, limits)
  const parsed = parseOpenAiEmbedding(json)
  if ('issues' in parsed) throw invalidRequest(parsed.issues.message, parsed.issues.param)
  const body = parsed.request
  checkVllmFields(snapshot, identity.tenant, body)
  const labels = clientLabelsOf(clientLabels)
  const inputs = embeddingInputs(body)
  const { detectorFailed, unreadable } = labelPii(snapshot, identity.tenant, [json], {
    text,
    labels,
    metrics,
    detect,
    unreadable: inputs.some((input) => 'ids' in input) ? 'token ids in input' : null,
  })
  return {
    ...identity,
    body,
    text,
    model: body.model,
    inputs: inputs.length,
    promptTokens: estimateEmbeddingTokens(inputs),
    labels: [...labels].sort(),
    detectorFailed: detectorFailed || unreadable !== null,
    unreadable,
  }
}
