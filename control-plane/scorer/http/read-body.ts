import type { IncomingMessage } from 'node:http'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

/** The request body, refusing (413) more than `limit` bytes without reading them all. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    throw new KinfError(
      'payload_too_large',
      `request body of ${declared} bytes is over the ${limit}-byte limit`,
    )
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of chunksOf(req)) {
    size += chunk.length
    if (size > limit)
      throw new KinfError('payload_too_large', `request body is over the ${limit}-byte limit`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/**
 * A body whose length is known and vouched for (signed, within the limit): read into one
 * buffer of that size, so it is held once rather than in chunks and then again joined.
 * Node frames the body by content-length, so it is `length` bytes or the read fails.
 */
export async function readExactBody(req: IncomingMessage, length: number): Promise<Buffer> {
  const body = Buffer.allocUnsafe(length)
  let size = 0
  for await (const bytes of chunksOf(req)) {
    if (size + bytes.length > length)
      throw new KinfError('invalid_request', `request body is over its ${length}-byte length`)
    bytes.copy(body, size)
    size += bytes.length
  }
  if (size !== length)
    throw new KinfError(
      'invalid_request',
      `request body of ${size} bytes, not the ${length} declared`,
    )
  return body
}

/**
 * The body's chunks as they arrive. A client that leaves before its body has arrived (Node
 * reports "aborted") is its own failure, not the scorer's: 400, never logged as internal.
 */
async function* chunksOf(req: IncomingMessage): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of req) yield chunk as Buffer
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error
    throw new KinfError('invalid_request', 'the connection closed before the whole body arrived')
  }
}

export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'))
  } catch (error) {
    throw new KinfError(
      'invalid_request',
      `the body is not valid JSON: ${(error as Error).message}`,
    )
  }
}
