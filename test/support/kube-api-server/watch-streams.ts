import type { ServerResponse } from 'node:http'
import { badRequest, expired } from './kube-error.ts'
import type { KubeObject } from './kube-object.ts'
import type { ObjectMatcher } from './object-selector.ts'
import type { ObjectStore, StoredChange } from './object-store.ts'
import { apiVersionOf, inVersion, type ResourceType, storageKeyOf } from './resource-registry.ts'

export interface WatchRequest {
  type: ResourceType
  namespace: string | undefined
  matches: ObjectMatcher
  query: URLSearchParams
  /** How objects go out: as they are, or as one-row Tables for `kubectl get -w`. */
  render: (object: KubeObject) => unknown
}

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'
  object: unknown
}

const objectEvents = new Set(['ADDED', 'MODIFIED', 'DELETED'])

interface OpenWatch {
  res: ServerResponse
  /** Set for good once stalled: like a half-open TCP connection, it never recovers. */
  stalled: boolean
  close(): void
}

/**
 * Watch responses: 200, headers flushed at once, newline-delimited JSON events; history
 * replayed after the requested resourceVersion, then live changes; bookmarks when
 * allowed; a clean end at timeoutSeconds; 410 Expired as an ERROR event. Also the fault
 * knobs that act on open watches.
 */
export class WatchStreams {
  private readonly open = new Set<OpenWatch>()
  private stalling = false
  private readonly store: ObjectStore
  private readonly bookmarkIntervalMs: number

  constructor(store: ObjectStore, bookmarkIntervalMs: number) {
    this.store = store
    this.bookmarkIntervalMs = bookmarkIntervalMs
  }

  get openCount(): number {
    return this.open.size
  }

  serve(res: ServerResponse, request: WatchRequest): void {
    const initial = this.initialEvents(request)
    const watch: OpenWatch = { res, stalled: this.stalling, close: () => {} }
    if (!watch.stalled) {
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-cache, private',
        'Transfer-Encoding': 'chunked',
      })
      res.flushHeaders()
    }
    const send = (event: WatchEvent) => {
      if (watch.stalled || res.writableEnded) return
      const object = objectEvents.has(event.type)
        ? request.render(event.object as KubeObject)
        : event.object
      res.write(`${JSON.stringify({ type: event.type, object })}\n`)
    }
    if (initial === 'expired') {
      send({ type: 'ERROR', object: this.expiredStatus(request) })
      if (!watch.stalled) res.end()
      else this.track(watch, () => {})
      return
    }
    for (const event of initial) send(event)
    this.follow(watch, request, send)
  }

  private track(watch: OpenWatch, release: () => void): void {
    watch.close = () => {
      release()
      this.open.delete(watch)
    }
    watch.res.on('close', watch.close)
    this.open.add(watch)
  }

  /** Aborts every open watch's connection without a final chunk: a premature close. */
  dropAll(): void {
    for (const watch of [...this.open]) {
      watch.close()
      watch.res.socket?.destroy()
    }
  }

  /** While on, watches (open and new) go silent for good; new ones after it are normal. */
  stall(on: boolean): void {
    this.stalling = on
    if (on) for (const watch of this.open) watch.stalled = true
  }

  /** Ends every watch cleanly (server shutdown). */
  endAll(): void {
    for (const watch of [...this.open]) {
      watch.close()
      watch.res.end()
    }
  }

  private initialEvents(request: WatchRequest): WatchEvent[] | 'expired' {
    const { query } = request
    const rv = query.get('resourceVersion') ?? ''
    const key = storageKeyOf(request.type)
    if (rv === '' || rv === '0' || query.get('sendInitialEvents') === 'true') {
      // "Start at most recent": the current state as ADDED events, then live changes.
      const events = this.store
        .list(key, request.namespace)
        .filter(request.matches)
        .map((object): WatchEvent => ({ type: 'ADDED', object: inVersion(request.type, object) }))
      if (query.get('sendInitialEvents') === 'true') {
        events.push(this.bookmark(request.type, { 'k8s.io/initial-events-end': 'true' }))
      }
      return events
    }
    if (!/^[0-9]+$/.test(rv)) throw badRequest(`invalid resourceVersion "${rv}"`)
    const changes = this.store.changesSince(Number(rv))
    if (!changes) return 'expired'
    return changes.flatMap((change) => eventFor(change, request) ?? [])
  }

  private follow(watch: OpenWatch, request: WatchRequest, send: (e: WatchEvent) => void): void {
    const unsubscribe = this.store.subscribe((change) => {
      const event = eventFor(change, request)
      if (event) send(event)
    })
    const timers: NodeJS.Timeout[] = []
    if (request.query.get('allowWatchBookmarks') === 'true') {
      timers.push(setInterval(() => send(this.bookmark(request.type)), this.bookmarkIntervalMs))
    }
    const timeoutSeconds = Number(request.query.get('timeoutSeconds') ?? '0')
    if (timeoutSeconds > 0) {
      timers.push(
        setTimeout(() => {
          if (watch.stalled) return
          watch.close()
          watch.res.end()
        }, timeoutSeconds * 1000),
      )
    }
    this.track(watch, () => {
      unsubscribe()
      for (const timer of timers) clearTimeout(timer)
    })
  }

  private bookmark(type: ResourceType, annotations?: Record<string, string>): WatchEvent {
    const metadata = {
      resourceVersion: String(this.store.resourceVersion),
      ...(annotations ? { annotations } : {}),
    }
    return {
      type: 'BOOKMARK',
      object: { kind: type.kind, apiVersion: apiVersionOf(type), metadata },
    }
  }

  private expiredStatus(request: WatchRequest): Record<string, unknown> {
    const rv = request.query.get('resourceVersion')
    const message = `too old resource version: ${rv} (${this.store.compactedAt})`
    return expired(message).toStatus()
  }
}

/** Selector watches see objects enter (ADDED) and leave (DELETED) the selection. */
function eventFor(change: StoredChange, request: WatchRequest): WatchEvent | undefined {
  if (change.storageKey !== storageKeyOf(request.type)) return undefined
  const inScope = (o: KubeObject | undefined) =>
    o !== undefined &&
    (request.namespace === undefined || o.metadata.namespace === request.namespace) &&
    request.matches(o)
  const now = inScope(change.object)
  const before = change.type === 'MODIFIED' && inScope(change.previous)
  const object = inVersion(request.type, change.object)
  if (change.type !== 'MODIFIED') return now ? { type: change.type, object } : undefined
  if (now) return { type: before ? 'MODIFIED' : 'ADDED', object }
  return before ? { type: 'DELETED', object } : undefined
}
