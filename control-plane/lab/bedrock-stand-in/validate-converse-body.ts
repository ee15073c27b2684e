import { z } from 'zod'
import { ConverseRequest } from '../../../shared/bedrock/converse-request.ts'

/**
 * Bedrock's own checks on a Converse body, the ones a translation bug would trip: the
 * shape, roles starting with user and alternating, no blank text, and toolConfig present
 * whenever the conversation holds tool blocks. Returns the request, or the message of
 * the ValidationException Bedrock would answer.
 */
export function validateConverseBody(body: unknown): ConverseRequest | string {
  const parsed = ConverseRequest.safeParse(body)
  if (!parsed.success) return `Malformed input request: ${z.prettifyError(parsed.error)}`
  const request = parsed.data
  if (request.messages.length === 0) return 'A conversation must start with a user message.'
  let hasToolBlocks = false
  for (const [i, message] of request.messages.entries()) {
    if (i === 0 && message.role !== 'user') {
      return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.'
    }
    if (i > 0 && request.messages[i - 1]?.role === message.role) {
      return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.'
    }
    if (message.content.length === 0) return `messages.${i}.content: the content field is empty.`
    for (const block of message.content) {
      if ('text' in block && block.text.trim() === '') {
        return 'The text field in the ContentBlock object is blank. Add text to the text field, and try again.'
      }
      if ('toolUse' in block || 'toolResult' in block) hasToolBlocks = true
    }
  }
  for (const block of request.system ?? []) {
    if ('text' in block && block.text.trim() === '') {
      return 'The text field in the SystemContentBlock object is blank.'
    }
  }
  if (hasToolBlocks && !request.toolConfig) {
    return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.'
  }
  return request
}
