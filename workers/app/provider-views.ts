import { toConverseRequest } from '../../shared/bedrock/to-converse-request.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { OpenAiRequest } from '../../shared/openai/openai-request.ts'

/**
 * What each external provider would be sent for this request, for the PII scan to read
 * exactly what would leave: Converse merges consecutive turns and joins system parts, and
 * decodes tool-call arguments, so text split across fields arrives joined. A request a
 * translation refuses cannot reach that provider, so it has no view there, and a snapshot
 * without providers none at all (no translation on the request's path). One entry per
 * provider type the snapshot schema knows: Bedrock's.
 */
export function providerViews(snapshot: ConfigSnapshot, request: OpenAiRequest): unknown[] {
  if (request.kind !== 'chat' || Object.keys(snapshot.providers).length === 0) return []
  try {
    return [toConverseRequest(request.body, { modelId: 'scan' })]
  } catch {
    return []
  }
}
