import type { IncomingMessage } from 'node:http'
import { KubeError } from './kube-error.ts'

function tooLarge(limit: number): KubeError {
  return new KubeError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`)
}

/**
 * The request body as text, at most `limit` bytes. Past the limit it rejects at once and
 * discards the rest, so the 413 can be answered while the client is still sending.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? '0')
  if (declared > limit) {
    req.resume()
    return Promise.reject(tooLarge(limit))
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let over = false
    req.on('data', (chunk: Buffer) => {
      if (over) return
      size += chunk.length
      if (size > limit) {
        over = true
        chunks.length = 0
        reject(tooLarge(limit))
      } else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}
