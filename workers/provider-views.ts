import { toConverseRequest } from '../shared/bedrock/to-converse-request.ts'
import type { OpenAiRequest } from '../shared/openai/openai-request.ts'

/**
 * What each external provider would be sent for this request, for the PII scan to read
 * exactly what would leave: Converse merges consecutive turns and joins system parts, and
 * decodes tool-call arguments, so text split across fields arrives joined. A request a
 * translation refuses cannot reach that provider, so it has no view there. (One entry per
 * provider type the snapshot schema knows: Bedrock's.)
 */
export function providerViews(request: OpenAiRequest): unknown[] {
  if (request.kind !== 'chat') return []
  try {
    return [toConverseRequest(request.body, { modelId: 'scan' })]
  } catch {
    return []
  }
}
