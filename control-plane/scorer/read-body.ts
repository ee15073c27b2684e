import type { IncomingMessage } from 'node:http'
import { KinfError } from '../../shared/errors/kinf-error.ts'

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
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit)
      throw new KinfError('payload_too_large', `request body is over the ${limit}-byte limit`)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
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
