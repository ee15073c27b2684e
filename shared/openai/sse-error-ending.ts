import type { KinfError } from '../errors/kinf-error.ts'
import { openAiErrorBody } from './openai-error-body.ts'

/**
 * How a stream that cannot go on ends, as OpenAI's do: an error event in OpenAI's error
 * shape, then `data: [DONE]`, so a client knows the answer did not finish.
 */
export function sseErrorEnding(error: KinfError): string {
  return `data: ${JSON.stringify(openAiErrorBody(error))}\n\ndata: [DONE]\n\n`
}
