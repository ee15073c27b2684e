import { converseUnhonoured } from '../../shared/bedrock/converse-capabilities.ts'
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
    // What would leave were the policy to drop every field Bedrock cannot honour: dropped
    // fields carry no text, and the rest must be scanned whatever the policy drops.
    const drop = converseUnhonoured(request.body).map(({ field }) => field)
    return [toConverseRequest(request.body, { modelId: 'scan' }, { drop })]
  } catch {
    return []
  }
}
