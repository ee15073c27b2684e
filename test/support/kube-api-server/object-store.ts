import type { KubeObject } from './kube-object.ts'

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED'

/** One write, as watches replay it. `previous` lets selector watches see objects leave. */
export interface StoredChange {
  resourceVersion: number
  type: ChangeType
  storageKey: string
  object: KubeObject
  previous?: KubeObject
}

export type ChangeListener = (change: StoredChange) => void

/**
 * Objects by storage key and namespace/name, one global resourceVersion counter (like
 * etcd's revision), the history of changes watches replay from, and live fan-out.
 * Stored objects are never mutated: reads get copies, changes hold the stored copy.
 */
export class ObjectStore {
  private revision = 0
  /** Watches from a resourceVersion below this cannot be served: history is gone. */
  private oldestServable = 0
  private readonly objects = new Map<string, Map<string, KubeObject>>()
  private history: StoredChange[] = []
  private readonly listeners = new Set<ChangeListener>()
  private readonly historyLimit: number

  constructor(historyLimit = 10_000) {
    this.historyLimit = historyLimit
  }

  get resourceVersion(): number {
    return this.revision
  }

  get(storageKey: string, namespace: string, name: string): KubeObject | undefined {
    const found = this.objects.get(storageKey)?.get(`${namespace}/${name}`)
    return found && structuredClone(found)
  }

  /** Sorted by namespace, then name, as etcd's key order returns them. */
  list(storageKey: string, namespace?: string): KubeObject[] {
    const bucket = this.objects.get(storageKey)
    if (!bucket) return []
    return [...bucket.entries()]
      .filter(([, o]) => namespace === undefined || (o.metadata.namespace ?? '') === namespace)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => structuredClone(o))
  }

  /** Stores the object under a new resourceVersion and tells watchers. */
  put(storageKey: string, object: KubeObject): KubeObject {
    const key = `${object.metadata.namespace ?? ''}/${object.metadata.name}`
    const bucket = this.objects.get(storageKey) ?? new Map<string, KubeObject>()
    this.objects.set(storageKey, bucket)
    const previous = bucket.get(key)
    const stored = structuredClone(object)
    this.revision += 1
    stored.metadata.resourceVersion = String(this.revision)
    bucket.set(key, stored)
    this.record({
      resourceVersion: this.revision,
      type: previous ? 'MODIFIED' : 'ADDED',
      storageKey,
      object: stored,
      ...(previous ? { previous } : {}),
    })
    return structuredClone(stored)
  }

  /** Removes the object; its last state carries the deletion's resourceVersion. */
  remove(storageKey: string, namespace: string, name: string): KubeObject | undefined {
    const bucket = this.objects.get(storageKey)
    const previous = bucket?.get(`${namespace}/${name}`)
    if (!bucket || !previous) return undefined
    bucket.delete(`${namespace}/${name}`)
    this.revision += 1
    const gone = structuredClone(previous)
    gone.metadata.resourceVersion = String(this.revision)
    this.record({ resourceVersion: this.revision, type: 'DELETED', storageKey, object: gone })
    return structuredClone(gone)
  }

  /** Changes after `resourceVersion`, or undefined when history no longer reaches back. */
  changesSince(resourceVersion: number): StoredChange[] | undefined {
    if (resourceVersion < this.oldestServable) return undefined
    return this.history.filter((c) => c.resourceVersion > resourceVersion)
  }

  get compactedAt(): number {
    return this.oldestServable
  }

  /** Forgets all history, as etcd compaction does: older watches get 410 Expired. */
  compact(): void {
    this.history = []
    this.oldestServable = this.revision
  }

  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private record(change: StoredChange): void {
    this.history.push(change)
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit)
      this.oldestServable = dropped.at(-1)?.resourceVersion ?? this.oldestServable
    }
    for (const listener of [...this.listeners]) listener(change)
  }
}
