import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'

/** A tool of a chat request, as vLLM's ChatCompletionToolsParam accepts it. */
const Tool = z.looseObject({
  type: z.literal('function', { error: 'only "function" tools are supported' }).optional(),
  function: z.looseObject({
    name: z.string({ error: 'a tool function needs a string "name"' }),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    defer_loading: z.boolean().nullish(),
  }),
  defer_loading: z.boolean().nullish(),
})
const Tools = z.array(Tool, { error: 'tools must be an array' })

/**
 * A request's tools as vLLM hands them to the chat template (OnlineRenderer.render_chat in
 * vllm/renderers/online_renderer.py): null when the request has none (an empty list stays
 * an empty list, which `tools is not none` tells apart), else the model_dump of each
 * ChatCompletionToolsParam (vllm/entrypoints/openai/chat_completion/protocol.py): type
 * and function, the function's name, description and parameters (null when absent),
 * defer_loading when set (a tool's own passes down to its function), then any other
 * field the client gave the function (pydantic's extra="allow", e.g. "strict"); the
 * tool's other top-level fields are dropped by its serializer. Throws KinfError
 * invalid_request (param "tools") for a tool vLLM refuses.
 */
export function toolDicts(tools: unknown): Record<string, unknown>[] | null {
  if (tools === null || tools === undefined) return null
  const parsed = Tools.safeParse(tools)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where = issue?.path.map(String).join('.') ?? ''
    throw new KinfError(
      'invalid_request',
      `tools${where === '' ? '' : `.${where}`}: ${issue?.message}`,
      {
        param: 'tools',
      },
    )
  }
  return parsed.data.map((tool) => {
    const { name, description, parameters, defer_loading, ...extra } = tool.function
    const deferLoading = defer_loading ?? tool.defer_loading ?? null
    return {
      type: 'function',
      function: {
        name,
        description: description ?? null,
        parameters: parameters ?? null,
        ...(deferLoading === null ? {} : { defer_loading: deferLoading }),
        ...extra,
      },
      ...(tool.defer_loading === null || tool.defer_loading === undefined
        ? {}
        : { defer_loading: tool.defer_loading }),
    }
  })
}
