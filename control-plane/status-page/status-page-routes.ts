import { readFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { constantTimeEqual } from '../../shared/auth/constant-time-equal.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { Handler } from '../scorer/scorer-server.ts'
import { statusPageHtml } from './status-page-html.ts'
import type { DecisionView, StatusView } from './status-view.ts'

/** Where the page's numbers come from (the shared state in Redis, or in memory). */
export interface StatusSource {
  status(): Promise<StatusView>
  /** The latest decisions, then each new or updated one, until `signal` aborts. */
  decisions(signal: AbortSignal): AsyncIterable<DecisionView>
}

const cookieName = 'kinference_admin'
const icon =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3b6fd8"/></svg>'

/**
 * /ui and what it reads, behind the admin token: `?token=` once (it becomes an HttpOnly
 * cookie scoped to /ui, and the address bar loses it), the cookie or a bearer header after.
 */
export function statusPageRoutes(options: {
  adminToken: string | null
  source: StatusSource
}): Record<string, Handler> {
  const verify = (given: string | null) => {
    const token = options.adminToken
    if (token === null)
      throw new KinfError('forbidden', 'the status page is off: set KINFERENCE_ADMIN_TOKEN')
    if (given === null || !constantTimeEqual(given, token))
      throw new KinfError('unauthorized', 'status page: open /ui?token=<the admin token>')
  }
  const authorized = (req: IncomingMessage) => verify(givenToken(req))
  let script: string | null = null
  return {
    'GET /ui': (req, res) => {
      const query = new URL(req.url ?? '/', 'http://x').searchParams.get('token')
      if (query !== null) {
        verify(query)
        res.writeHead(303, {
          location: '/ui',
          'set-cookie': `${cookieName}=${encodeURIComponent(query)}; Path=/ui; HttpOnly; SameSite=Strict`,
        })
        res.end()
        return
      }
      authorized(req)
      send(res, 'text/html; charset=utf-8', statusPageHtml)
    },
    // Public: a browser asks for it without the cookie's path in mind, and it says nothing.
    'GET /ui/icon.svg': (_req, res) => send(res, 'image/svg+xml', icon),
    'GET /ui/app.js': (req, res) => {
      authorized(req)
      script ??= clientScript()
      send(res, 'text/javascript; charset=utf-8', script)
    },
    'GET /ui/api/status': async (req, res) => {
      authorized(req)
      send(res, 'application/json', JSON.stringify(await options.source.status()))
    },
    'GET /ui/api/decisions': async (req, res) => {
      authorized(req)
      await streamDecisions(options.source, req, res)
    },
  }
}

function givenToken(req: IncomingMessage): string | null {
  const header = req.headers.authorization ?? ''
  if (header.startsWith('Bearer ')) return header.slice(7)
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=')
    if (name === cookieName && value !== undefined) return decodeURIComponent(value)
  }
  return null
}

function send(res: ServerResponse, type: string, body: string): void {
  res.writeHead(200, {
    'content-type': type,
    'cache-control': 'no-store',
    // The page loads only its own script and calls only its own API.
    'content-security-policy':
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'",
  })
  res.end(body)
}

/** The client as it is: plain JavaScript, its JSDoc types checked by tsc, no build step. */
function clientScript(): string {
  return readFileSync(new URL('./client/status-page-client.js', import.meta.url), 'utf8')
}

/** Server-sent events: one `decision` event per new or updated decision. */
async function streamDecisions(
  source: StatusSource,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const aborted = new AbortController()
  req.once('close', () => aborted.abort())
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-store',
    connection: 'keep-alive',
  })
  res.write(': kinference decisions\n\n')
  try {
    for await (const decision of source.decisions(aborted.signal)) {
      if (aborted.signal.aborted) break
      res.write(`event: decision\ndata: ${JSON.stringify(decision)}\n\n`)
    }
  } finally {
    res.end()
  }
}
