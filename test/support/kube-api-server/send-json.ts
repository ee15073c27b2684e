import type { ServerResponse } from 'node:http'
import { failureStatus, KubeError } from './kube-error.ts'

export function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  })
  res.end(text)
}

/** Any failure as a Status object; one that happens mid-stream cuts the connection. */
export function sendError(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  if (error instanceof KubeError) {
    if (error.code === 413) res.setHeader('Connection', 'close')
    sendJson(res, error.code, error.toStatus())
    return
  }
  const message = error instanceof Error ? error.message : String(error)
  sendJson(res, 500, failureStatus(500, 'InternalError', `Internal error occurred: ${message}`))
}
