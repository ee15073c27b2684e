import { readFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { constantTimeEqual } from '../../shared/auth/constant-time-equal.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { readBody } from '../scorer/http/read-body.ts'
import type { Handler } from '../scorer/http/scorer-server.ts'
import { loginPageHtml, statusPageHtml } from './status-page-html.ts'
import {
  defaultSessionTtlMs,
  type StatusPageSessions,
  statusPageSessions,
} from './status-page-sessions.ts'
import type { DecisionView, StatusView } from './status-view.ts'

/** Where the page's numbers come from (the shared state in Redis, or in memory). */
export interface StatusSource {
  status(): Promise<StatusView>
  /** The latest decisions, then each new or updated one, until `signal` aborts. */
  decisions(signal: AbortSignal): AsyncIterable<DecisionView>
}

const sessionCookie = 'kinference_session'
/** The cookie that held the raw admin token before sessions; cleared at each login. */
const legacyCookie = 'kinference_admin'
const icon =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3b6fd8"/></svg>'
const loginHint = 'open /ui?token=<the admin token> (KINFERENCE_ADMIN_TOKEN)'
/** The login form's body: one token field. */
const maxLoginBytes = 4096

/**
 * /ui and what it reads, behind the admin token. The token is checked once, from `?token=`
 * (answered with a redirect to the same address without it) or a bearer header, and the
 * browser gets a session cookie (status-page-sessions.ts: signed, expiring, HttpOnly,
 * SameSite=Strict, scoped to /ui, Secure over HTTPS) that never holds the token. API
 * clients may send the bearer header on every request instead.
 */
export function statusPageRoutes(options: {
  adminToken: string | null
  source: StatusSource
  /** The clock sessions expire by (Date.now unless a test says). */
  nowMs?: () => number
  sessionTtlMs?: number
}): Record<string, Handler> {
  const { adminToken } = options
  const nowMs = options.nowMs ?? Date.now
  const ttlMs = options.sessionTtlMs ?? defaultSessionTtlMs
  const sessions = adminToken === null ? null : statusPageSessions(adminToken, { nowMs, ttlMs })
  const off = new KinfError('forbidden', 'the status page is off: set KINFERENCE_ADMIN_TOKEN')
  /** Why this token (from ?token= or a bearer header) is refused; null when it is the one. */
  const tokenRefusal = (given: string, where: string): KinfError | null => {
    if (adminToken === null) return off
    if (constantTimeEqual(given, adminToken)) return null
    return new KinfError('unauthorized', `status page: wrong ${where}; ${loginHint}`)
  }
  /**
   * Whether the request may see the page: until when (null: a bearer header, checked on
   * each request), or why not.
   */
  const access = (req: IncomingMessage): { untilMs: number | null } | KinfError => {
    if (sessions === null) return off
    const bearer = bearerOf(req)
    if (bearer !== null) return tokenRefusal(bearer, 'bearer token') ?? { untilMs: null }
    const session = sessions.check(cookieOf(req, sessionCookie))
    if (session.kind === 'valid') return { untilMs: session.expiresAtMs }
    return new KinfError(
      'unauthorized',
      session.kind === 'expired'
        ? `status page: the session has expired; ${loginHint} again`
        : `status page: not signed in; ${loginHint}`,
    )
  }
  /** The request's access, or null once it has been refused (as a page or an error). */
  const authorized = (req: IncomingMessage, res: ServerResponse) => {
    const granted = access(req)
    if (!(granted instanceof KinfError)) return granted
    refuse(req, res, granted, ttlMs)
    return null
  }
  const login = (req: IncomingMessage): string[] => {
    const session = (sessions as StatusPageSessions).issue()
    const secure = cameOverHttps(req) ? '; Secure' : ''
    return [
      `${sessionCookie}=${session.value}; Max-Age=${session.maxAgeSeconds}; Path=/ui; HttpOnly; SameSite=Strict${secure}`,
      `${legacyCookie}=; Max-Age=0; Path=/ui; HttpOnly; SameSite=Strict${secure}`,
    ]
  }
  let script: string | null = null
  return {
    'GET /ui': (req, res) => {
      const address = new URL(req.url ?? '/', 'http://x')
      const query = address.searchParams.get('token')
      if (query !== null) {
        const refused = tokenRefusal(query, 'token')
        if (refused !== null) {
          refuse(req, res, refused, ttlMs)
          return
        }
        address.searchParams.delete('token')
        res.writeHead(303, {
          location: `/ui${address.search}`,
          'set-cookie': login(req),
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
        })
        res.end()
        return
      }
      if (authorized(req, res) === null) return
      // A valid bearer header is a login too: the page's own requests carry no header.
      send(
        res,
        'text/html; charset=utf-8',
        statusPageHtml,
        bearerOf(req) === null ? {} : { 'set-cookie': login(req) },
      )
    },
    // The login page's form: the token in the body, never in an address or a history.
    'POST /ui': async (req, res) => {
      const form = new URLSearchParams((await readBody(req, maxLoginBytes)).toString('utf8'))
      const refused = tokenRefusal(form.get('token') ?? '', 'token')
      if (refused !== null) {
        refuse(req, res, refused, ttlMs)
        return
      }
      res.writeHead(303, {
        location: '/ui',
        'set-cookie': login(req),
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      })
      res.end()
    },
    // The scorer's own address typed into a browser: the status page (its login, without a
    // session). Anything else asking for / gets the scorer's 404 as before.
    'GET /': (req, res) => {
      if (!(req.headers.accept ?? '').includes('text/html'))
        throw new KinfError('not_found', 'no route for GET /', { status: 404 })
      res.writeHead(303, { location: '/ui', 'cache-control': 'no-store' })
      res.end()
    },
    // A typed address with a trailing slash is the page too, not the scorer's 404.
    'GET /ui/': (req, res) => {
      const search = new URL(req.url ?? '/', 'http://x').search
      res.writeHead(308, { location: `/ui${search}`, 'cache-control': 'no-store' })
      res.end()
    },
    // Public: a browser asks for it without the cookie's path in mind, and it says nothing.
    'GET /ui/icon.svg': (_req, res) => send(res, 'image/svg+xml', icon),
    'GET /ui/app.js': (req, res) => {
      if (authorized(req, res) === null) return
      script ??= clientScript()
      send(res, 'text/javascript; charset=utf-8', script)
    },
    'GET /ui/api/status': async (req, res) => {
      if (authorized(req, res) === null) return
      send(res, 'application/json', JSON.stringify(await options.source.status()))
    },
    'GET /ui/api/decisions': async (req, res) => {
      const granted = authorized(req, res)
      if (granted === null) return
      const { untilMs } = granted
      // A session's stream ends with the session (at the first decision after its expiry);
      // EventSource's reconnection is then refused, and the page says so.
      await streamDecisions(options.source, req, res, () => untilMs === null || nowMs() < untilMs)
    },
  }
}

/**
 * A browser's navigation (it accepts HTML) gets a page saying how to log in; anything else
 * the error itself, which the server answers as JSON.
 */
function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  error: KinfError,
  sessionTtlMs: number,
): void {
  if (!(req.headers.accept ?? '').includes('text/html')) throw error
  res.writeHead(error.status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-security-policy':
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'",
  })
  res.end(loginPageHtml(error.message, sessionTtlMs))
}

function bearerOf(req: IncomingMessage): string | null {
  const header = req.headers.authorization ?? ''
  return header.startsWith('Bearer ') ? header.slice(7) : null
}

function cookieOf(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return null
}

/**
 * Over TLS here, or at a proxy that says so (X-Forwarded-Proto, Forwarded: proto=). A
 * client that lies only makes its own cookie Secure, so it is not sent back over HTTP.
 */
function cameOverHttps(req: IncomingMessage): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted === true) return true
  const forwarded = String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]
    ?.trim()
  if (forwarded?.toLowerCase() === 'https') return true
  return /(^|[;,\s])proto=https(\b|$)/i.test(String(req.headers.forwarded ?? ''))
}

function send(
  res: ServerResponse,
  type: string,
  body: string,
  headers: Record<string, string | string[]> = {},
): void {
  res.writeHead(200, {
    ...headers,
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
  stillAllowed: () => boolean,
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
      if (aborted.signal.aborted || !stillAllowed()) break
      res.write(`event: decision\ndata: ${JSON.stringify(decision)}\n\n`)
    }
  } finally {
    res.end()
  }
}
