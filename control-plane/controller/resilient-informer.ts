import { type KubeConfig, type KubernetesObject, ListWatch, Watch } from '@kubernetes/client-node'
import { z } from 'zod'
import { parseOptions } from '../../shared/config/parse-options.ts'

export const ResilientInformerOptions = z.strictObject({
  /** Collection path, e.g. /apis/kinference.dev/v1alpha1/namespaces/x/inferencepools. */
  path: z.string().startsWith('/'),
  /** A server-side bound on each watch, so a dead connection cannot hide for long. */
  watchTimeoutSeconds: z.int().min(1).max(3_600).default(290),
  /** Restart when nothing (event, bookmark, reconnect) arrived for this long. */
  staleAfterMs: z.int().positive().default(360_000),
  backoffInitialMs: z.int().positive().default(500),
  backoffMaxMs: z.int().positive().default(30_000),
  /**
   * For a kind the cluster may not serve (an optional CRD): a 404 is not a failure but an
   * empty, synced cache, asked again this often (no backoff, one log line per change).
   * Null: a 404 is a failure like any other (at start, startup fails).
   */
  absentRetryMs: z.int().positive().nullable().default(null),
})
export type ResilientInformerOptionsInput = z.input<typeof ResilientInformerOptions>

export interface InformerHooks {
  list: () => Promise<{ items: KubernetesObject[]; metadata?: { resourceVersion?: string } }>
  /** An object was added, changed or deleted (or a relist replaced the cache). */
  onChange: (type: 'add' | 'update' | 'delete', object: KubernetesObject) => void
  /** The informer stopped and is being restarted (why, and after how long). */
  onRestart: (reason: string, delayMs: number) => void
  /** A fresh list replaced the cache: objects deleted meanwhile are simply gone from it. */
  onRelisted: () => void
  /** With absentRetryMs: the kind stopped (true) or started (false) being served. */
  onAbsent?: (absent: boolean, reason: string) => void
  random: () => number
}

/**
 * client-node's ListWatch, kept alive: it asks for bookmarks and a server-side timeout
 * (ListWatch sets neither), and since a ListWatch stops for good on any error but 410
 * and timeouts, every stop, or a watch silent for too long, starts a fresh one after a
 * jittered exponential backoff. The previous cache stays the one read until the new one
 * has listed, so readers never see a half-filled cache.
 */
export class ResilientInformer {
  private readonly options: z.infer<typeof ResilientInformerOptions>
  private active: ListWatch<KubernetesObject> | null = null
  private generation = 0
  private failures = 0
  private lastActivityMs = Date.now()
  private stopped = false
  private retry: ReturnType<typeof setTimeout> | null = null
  private readonly watchdog: ReturnType<typeof setInterval>
  private firstSync: { resolve: () => void; reject: (error: unknown) => void } | null = null
  /** The last error, cleared by a successful list. */
  lastError: string | null = null
  synced = false
  /** With absentRetryMs: the server answered 404, so the kind is not served (yet). */
  absent = false

  private readonly kubeConfig: KubeConfig
  private readonly hooks: InformerHooks

  constructor(
    kubeConfig: KubeConfig,
    options: ResilientInformerOptionsInput,
    hooks: InformerHooks,
  ) {
    this.kubeConfig = kubeConfig
    this.hooks = hooks
    this.options = parseOptions(ResilientInformerOptions, options, 'informer')
    this.watchdog = setInterval(
      () => this.checkStale(),
      Math.max(1_000, this.options.staleAfterMs / 4),
    )
    this.watchdog.unref()
  }

  /** Resolves after the first successful list; rejects with the first failure. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.firstSync = { resolve, reject }
      this.launch()
    })
  }

  list(): readonly KubernetesObject[] {
    return this.absent ? [] : (this.active?.list() ?? [])
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.generation++
    clearInterval(this.watchdog)
    if (this.retry) clearTimeout(this.retry)
    await this.active?.stop()
  }

  private launch() {
    const generation = ++this.generation
    const query = `allowWatchBookmarks=true&timeoutSeconds=${this.options.watchTimeoutSeconds}`
    const current = () => generation === this.generation && !this.stopped
    const holder: { watch: ListWatch<KubernetesObject> | null } = { watch: null }
    const next: ListWatch<KubernetesObject> = new ListWatch<KubernetesObject>(
      `${this.options.path}?${query}`,
      new Watch(this.kubeConfig),
      () => this.listed(holder.watch as ListWatch<KubernetesObject>, current),
      false,
    )
    holder.watch = next
    for (const type of ['add', 'update', 'delete'] as const) {
      next.on(type, (object: KubernetesObject) => {
        if (!current()) return
        this.lastActivityMs = Date.now()
        // Until the new cache has listed, the old one is read; its events are replays.
        if (this.active === next) this.hooks.onChange(type, object)
      })
    }
    next.on('connect', () => {
      if (current()) this.lastActivityMs = Date.now()
    })
    next.on('error', (error: unknown) => {
      if (current()) this.failed(next, error)
    })
    void next.start()
  }

  private async listed(
    next: ListWatch<KubernetesObject>,
    current: () => boolean,
  ): Promise<{ items: KubernetesObject[]; metadata?: { resourceVersion?: string } }> {
    const result = await this.hooks.list()
    // ListWatch fills its cache right after this resolves; swap once it has.
    setTimeout(() => {
      if (!current()) return
      const previous = this.active
      this.active = next
      this.failures = 0
      this.lastError = null
      this.synced = true
      this.lastActivityMs = Date.now()
      if (previous && previous !== next) void previous.stop()
      if (this.absent) {
        this.absent = false
        this.hooks.onAbsent?.(false, 'listed')
      }
      for (const object of next.list()) this.hooks.onChange('add', object)
      this.hooks.onRelisted()
      this.firstSync?.resolve()
      this.firstSync = null
    }, 0)
    return result
  }

  private failed(failedWatch: ListWatch<KubernetesObject>, error: unknown) {
    this.lastError = describeError(error)
    if (this.options.absentRetryMs !== null && statusOf(error) === 404) {
      this.notServed(failedWatch, this.options.absentRetryMs)
      return
    }
    if (this.firstSync) {
      this.firstSync.reject(error)
      this.firstSync = null
      this.stopped = true
      void failedWatch.stop()
      return
    }
    this.restart(this.lastError)
  }

  /**
   * The kind is not served: the cache reads empty (what was in it is announced deleted),
   * the informer counts as synced, and a fresh list is tried after `retryMs`. Logged once
   * per change, not per retry: a cluster without the CRD is a normal state.
   */
  private notServed(failedWatch: ListWatch<KubernetesObject>, retryMs: number) {
    const gone = this.absent ? [] : this.list()
    if (!this.absent) this.hooks.onAbsent?.(true, this.lastError ?? 'HTTP 404')
    this.absent = true
    this.synced = true
    this.generation++
    void failedWatch.stop()
    for (const object of gone) this.hooks.onChange('delete', object)
    if (gone.length > 0) this.hooks.onRelisted()
    this.firstSync?.resolve()
    this.firstSync = null
    if (this.stopped || this.retry) return
    this.retry = setTimeout(() => {
      this.retry = null
      if (!this.stopped) this.launch()
    }, retryMs)
  }

  private restart(reason: string) {
    if (this.stopped || this.retry) return
    this.generation++
    const ceiling = Math.min(
      this.options.backoffMaxMs,
      this.options.backoffInitialMs * 2 ** Math.min(this.failures, 20),
    )
    this.failures++
    // Full jitter: replicas that lost the API server together do not return together.
    const delayMs = Math.round(ceiling / 2 + (this.hooks.random() * ceiling) / 2)
    this.hooks.onRestart(reason, delayMs)
    this.retry = setTimeout(() => {
      this.retry = null
      if (!this.stopped) this.launch()
    }, delayMs)
  }

  private checkStale() {
    if (this.stopped || this.retry || this.absent) return
    if (Date.now() - this.lastActivityMs > this.options.staleAfterMs)
      this.restart(`no event or bookmark for ${Math.round(this.options.staleAfterMs / 1000)} s`)
  }
}

/** The HTTP status of a failure of client-node, if it has one. */
export function statusOf(error: unknown): number | undefined {
  const record = error as { statusCode?: number; code?: number | string } | null
  return record?.statusCode ?? (typeof record?.code === 'number' ? record.code : undefined)
}

/** One line for a failure of client-node or the network, for logs, status and exit. */
export function describeError(error: unknown): string {
  const record = error as {
    statusCode?: number
    code?: number | string
    message?: string
    body?: unknown
    cause?: { code?: string; message?: string }
  }
  const status = record?.statusCode ?? (typeof record?.code === 'number' ? record.code : undefined)
  const bodyMessage = statusMessage(record?.body)
  if (status !== undefined)
    return `HTTP ${status}${bodyMessage ? `: ${bodyMessage}` : record.message ? `: ${firstLine(record.message)}` : ''}`
  if (record?.cause?.code)
    return `${record.cause.code}${record.cause.message ? `: ${firstLine(record.cause.message)}` : ''}`
  return firstLine(record?.message ?? String(error))
}

function statusMessage(body: unknown): string | null {
  if (typeof body === 'string') {
    try {
      return statusMessage(JSON.parse(body))
    } catch {
      return null
    }
  }
  const message = (body as { message?: unknown } | null)?.message
  return typeof message === 'string' ? firstLine(message) : null
}

const firstLine = (text: string) => text.split('\n', 1)[0]?.slice(0, 300) ?? ''
