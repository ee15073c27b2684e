import type { ContentBlock, Message } from '@aws-sdk/client-bedrock-runtime'
import type { ConverseMessage } from '../../shared/bedrock/converse-request.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'

/**
 * Converse messages as the SDK takes them: the same, but image bytes decoded (the wire
 * carries base64, the SDK wants bytes). Used for Converse, ConverseStream and CountTokens.
 */
export function converseSdkMessages(messages: readonly ConverseMessage[]): Message[] {
  return messages.map((message) => ({
    role: message.role,
    content: message.content.map((block): ContentBlock => {
      if (!('image' in block)) return block
      const { format, source } = block.image
      return { image: { format, source: { bytes: base64Bytes(source.bytes) } } }
    }),
  }))
}

function base64Bytes(base64: string): Uint8Array {
  try {
    const binary = atob(base64)
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  } catch {
    throw new KinfError('invalid_request', "an image's base64 data is malformed")
  }
}
