import type { BlockKeyTable } from './block-key-table.ts'
import { EngineHashTable } from './engine-hash-table.ts'

/**
 * One pod's part of the in-memory index: which engine hashes it stored (mapped to entries of
 * the shared BlockKeyTable) and which entries it holds speculatively. The pod's bit in an
 * entry's `stored` bitset is set exactly while at least one stored engine hash maps to the
 * entry, its `speculative` bit exactly while `speculative` has the entry.
 */
export class PodHoldings {
  readonly name: string
  readonly slot: number
  private readonly engine = new EngineHashTable()
  /** Entries with more than one live reference (duplicates, or distinct hashes): beyond the first. */
  private readonly extraRefs = new Map<number, number>()
  /** Entry id → expiry (ms) of the speculative entry. */
  readonly speculative = new Map<number, number>()
  /** Distinct entries with the stored bit set. */
  storedEntries = 0

  constructor(name: string, slot: number) {
    this.name = name
    this.slot = slot
  }

  get isEmpty(): boolean {
    return this.engine.size === 0 && this.speculative.size === 0
  }

  /** The entry an engine hash of this pod maps to, or -1. */
  entryOf(hash: bigint): number {
    const record = this.engine.find(hash)
    return record === -1 ? -1 : this.engine.entryOf(record)
  }

  /**
   * One stored block. A hash stored again for the same key is a re-announcement (vLLM's
   * kv_cache_report_mode "full" announces reused blocks again, docs/vllm-wire.md §1.10) and
   * changes nothing, so one removal forgets it; a hash stored again for another key
   * (impossible from vLLM, possible from garbage) now means the new key: its old
   * references are dropped. Beyond `maxHashes` the oldest-stored hash goes.
   */
  store(table: BlockKeyTable, hash: bigint, high: number, low: number, maxHashes: number): void {
    const record = this.engine.find(hash)
    if (record !== -1 && this.engine.entryOf(record) === table.find(high, low)) return
    const id = table.acquire(high, low)
    // The new reference goes first: dropping old ones may otherwise free a shared entry.
    this.addRef(table, id)
    if (record === -1) {
      this.engine.insert(hash, id)
      if (this.engine.size > maxHashes) this.forget(table, this.engine.oldest)
      return
    }
    const previous = this.engine.entryOf(record)
    const stores = this.engine.storesOf(record)
    this.engine.setEntry(record, id)
    for (let i = 0; i < stores; i++) this.dropRef(table, previous)
  }

  /** One BlockRemoved hash; false when the pod never stored it. */
  remove(table: BlockKeyTable, hash: bigint): boolean {
    const record = this.engine.find(hash)
    if (record === -1) return false
    const id = this.engine.entryOf(record)
    this.engine.removeStore(record)
    this.dropRef(table, id)
    return true
  }

  /** Drops every store of a record (eviction under the cap). */
  private forget(table: BlockKeyTable, record: number): void {
    const id = this.engine.entryOf(record)
    const stores = this.engine.storesOf(record)
    this.engine.delete(record)
    for (let i = 0; i < stores; i++) this.dropRef(table, id)
  }

  /** Speculative hold until `expiry`, extending (never shortening) an existing one. */
  addSpeculative(table: BlockKeyTable, id: number, expiry: number): boolean {
    const current = this.speculative.get(id)
    if (current !== undefined && current >= expiry) return false
    this.speculative.set(id, expiry)
    table.setBit(table.speculative, id, this.slot)
    return true
  }

  dropSpeculative(table: BlockKeyTable, id: number): void {
    if (this.speculative.delete(id)) table.clearBit(table.speculative, id, this.slot)
  }

  /** Everything the pod holds, stored and speculative (AllBlocksCleared, dropPod). */
  clear(table: BlockKeyTable): void {
    this.engine.forEachEntry((id) => {
      if (table.clearBit(table.stored, id, this.slot)) this.storedEntries--
    })
    for (const id of this.speculative.keys()) table.clearBit(table.speculative, id, this.slot)
    this.engine.clear()
    this.extraRefs.clear()
    this.speculative.clear()
  }

  /** (block, pod) entries: distinct entries stored or speculative. */
  entryCount(table: BlockKeyTable): number {
    let speculativeOnly = 0
    for (const id of this.speculative.keys()) {
      if (!table.hasBit(table.stored, id, this.slot)) speculativeOnly++
    }
    return this.storedEntries + speculativeOnly
  }

  private addRef(table: BlockKeyTable, id: number): void {
    if (table.setBit(table.stored, id, this.slot)) this.storedEntries++
    else this.extraRefs.set(id, (this.extraRefs.get(id) ?? 0) + 1)
  }

  private dropRef(table: BlockKeyTable, id: number): void {
    const extra = this.extraRefs.size === 0 ? undefined : this.extraRefs.get(id)
    if (extra === undefined) {
      if (table.clearBit(table.stored, id, this.slot)) this.storedEntries--
    } else if (extra === 1) this.extraRefs.delete(id)
    else this.extraRefs.set(id, extra - 1)
  }
}
