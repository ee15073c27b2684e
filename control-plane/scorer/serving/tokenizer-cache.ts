import type { Log } from '../../../shared/logging/log.ts'
import { loadTokenizer, type TokenizerLoad } from '../../tokenizer/load-tokenizer.ts'
import type { Tokenizer } from '../../tokenizer/tokenizer.ts'

export type { TokenizerLoad }

/** What the cache knows of one source: its load, and since when (wall ms) it stands. */
export type TokenizerEntry = TokenizerLoad & { source: string; sinceMs: number }

export interface TokenizerCacheOptions {
  /** Loads one source (a built-in name or a model directory); never throws. */
  load?: (source: string) => TokenizerLoad
  /** Wall clock, for when a source started failing or loaded. */
  nowMs?: () => number
  /** Each load that failed, and each source that loads after failing. */
  log?: Log
}

/**
 * The pools' tokenizers, one per source, shared by pools (a load takes ~250 ms). A source
 * that cannot be loaded is remembered as failed (its pool routes on load alone) and is not
 * loaded again on a request's path: only when retryFailed is called (a new snapshot, and
 * the scorer's timer, tokenization.retryMs).
 */
export class TokenizerCache {
  private readonly entries = new Map<string, TokenizerEntry>()
  private readonly load: (source: string) => TokenizerLoad
  private readonly nowMs: () => number
  private readonly log: Log

  constructor(options: TokenizerCacheOptions = {}) {
    this.load = options.load ?? ((source) => loadTokenizer(source))
    this.nowMs = options.nowMs ?? Date.now
    this.log = options.log ?? (() => {})
  }

  /** The source's tokenizer, loaded on first use; a failure stands until retryFailed. */
  get(source: string): TokenizerEntry {
    const known = this.entries.get(source)
    if (known) return known
    return this.loadNow(source, null)
  }

  /** The tokenizer, or null when the source cannot be loaded. */
  tokenizer(source: string): Tokenizer | null {
    const entry = this.get(source)
    return entry.ok ? entry.tokenizer : null
  }

  /** The tokenizer; throws the KinfError of a source that cannot be loaded (tools, benches). */
  require(source: string): Tokenizer {
    const entry = this.get(source)
    if (!entry.ok) throw entry.error
    return entry.tokenizer
  }

  /** Loads every failed source again; answers those that load now. */
  retryFailed(): string[] {
    const recovered: string[] = []
    for (const entry of [...this.entries.values()]) {
      if (entry.ok) continue
      if (this.loadNow(entry.source, entry).ok) recovered.push(entry.source)
    }
    return recovered
  }

  /** The sources that cannot be loaded now. */
  failed(): TokenizerEntry[] {
    return [...this.entries.values()].filter((entry) => !entry.ok)
  }

  private loadNow(source: string, before: TokenizerEntry | null): TokenizerEntry {
    const loaded = this.load(source)
    // A failure that goes on keeps its start: the condition says since when.
    const sinceMs = before && !before.ok && !loaded.ok ? before.sinceMs : this.nowMs()
    const entry: TokenizerEntry = { ...loaded, source, sinceMs }
    this.entries.set(source, entry)
    if (loaded.ok) {
      if (before !== null) this.log(`tokenizer ${source} loaded`)
    } else if (before?.ok !== false || before.error.message !== loaded.error.message)
      this.log(`tokenizer ${source} cannot be loaded: ${loaded.error.message}`, { level: 'warn' })
    return entry
  }
}
