import { z } from 'zod'

/**
 * Request fields only vLLM reads that reach past the request itself: its scheduler
 * (`priority`: lower runs first when the server schedules by priority), its KV transfer
 * between prefill and decode servers (`kv_transfer_params`, and `vllm_xargs`, which vLLM
 * passes on with it to its extensions), its own request id (`request_id`, which it keys
 * the request by), code and templates the server would run (`logits_processors`,
 * `chat_template`), and its multimodal processor (`mm_processor_kwargs`). From vLLM's
 * ChatCompletionRequest and CompletionRequest (docs/edge-keys-and-errors.md §2.5). A
 * tenant's requests carry one to the pods only when its policy lists it (Tenant.vllmFields);
 * otherwise the edge refuses the request with a 400 naming the field.
 */
export const VllmOnlyField = z.enum([
  'priority',
  'kv_transfer_params',
  'vllm_xargs',
  'request_id',
  'logits_processors',
  'chat_template',
  'mm_processor_kwargs',
])
export type VllmOnlyField = z.infer<typeof VllmOnlyField>

/** Values vLLM reads as unset: absent, null, and priority's default 0. */
function isSet(field: VllmOnlyField, value: unknown): boolean {
  if (value === undefined || value === null) return false
  return !(field === 'priority' && value === 0)
}

/** The first vLLM-only field the body sets that `allowed` does not list; null when none. */
export function unallowedVllmField(
  body: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
): VllmOnlyField | null {
  for (const field of VllmOnlyField.options)
    if (isSet(field, body[field]) && !allowed.includes(field)) return field
  return null
}
