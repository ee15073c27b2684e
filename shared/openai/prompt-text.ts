import type { OpenAiRequest } from './openai-request.ts'

/**
 * Every piece of text a request sends a model, for the PII detectors and the token
 * estimate: message contents and text parts, tool-call arguments, names; a completions
 * prompt as given (token ids carry no text the edge can read). Pieces are joined with a
 * newline so a detector never sees two fields run together into one match.
 */
export function promptText(request: OpenAiRequest): string {
  if (request.kind === 'completion') {
    const prompt = request.body.prompt
    return typeof prompt === 'string' ? prompt : ''
  }
  const pieces: string[] = []
  for (const message of request.body.messages) {
    if (typeof message.name === 'string') pieces.push(message.name)
    const content = message.content
    if (typeof content === 'string') pieces.push(content)
    else if (Array.isArray(content))
      for (const part of content) if (typeof part.text === 'string') pieces.push(part.text)
    for (const call of message.tool_calls ?? []) {
      const fn = (call as { function?: { name?: unknown; arguments?: unknown } }).function
      if (typeof fn?.arguments === 'string') pieces.push(fn.arguments)
    }
  }
  return pieces.join('\n')
}
