import { extraKeySeparator, mmExtraKey } from '../../shared/kv-index/mm-block-extras.ts'
import type { BlockStored } from './kv-cache-event.ts'

/** What a BlockStored event's `extra_keys` and `lora_name` mean for our block keys. */
export interface ReadExtraKeys {
  /** `lora_name`, else the name of a typed LoRA key. */
  loraName: string | null
  /** cache_salt, when the event's first block starts a sequence and carries it. */
  cacheSalt: string | null
  /** Per block, its other keys as one canonical string (BlockExtras); null when none has any. */
  blockExtras: (string | null)[] | null
}

/**
 * Reads `extra_keys` (docs/vllm-wire.md §1.9) in both forms vLLM may send:
 * - plain (#33304): one tuple or null per block, the bare values vLLM hashes: the LoRA
 *   name, `(identifier, offset)` per multimodal input (a bare hash string before #36708),
 *   cache_salt last in the first block of a request, prompt-embedding digests;
 * - typed (PR #55488, closed unmerged): a list of tagged structs per block, `{type: "lora",
 *   name}`, `{type: "mm", modality, hash, block_offset}`, `{type: "cache_salt", salt}`,
 *   `{type: "prompt_embeds", hash}`, `{type: "legacy", value}` (a plain value).
 * The LoRA name seeds the chain's root and the salt its first block, as on the router's
 * side. Everything else a block carries enters that block's key: a multimodal input as
 * its identifier and offset, the same string from either form, and anything not known
 * here as well, so such a block never matches a request that lacks it (a missed hit,
 * never a false one).
 */
export function readExtraKeys(event: BlockStored): ReadExtraKeys {
  const entries = Array.isArray(event.extraKeys) ? event.extraKeys : []
  let loraName = event.loraName
  if (loraName === null) loraName = typedLoraName(entries)
  const startsSequence = event.parentBlockHash === null
  let cacheSalt: string | null = null
  let blockExtras: (string | null)[] | null = null
  entries.forEach((entry, block) => {
    const keys = keysOf(entry)
    if (keys.length === 0) return
    const first = startsSequence && block === 0
    const parts: string[] = []
    // Plain form: vLLM appends the salt after every other key of the first block.
    const saltAt = first ? lastPlainSalt(keys, loraName) : -1
    keys.forEach((key, i) => {
      if (i === saltAt) cacheSalt = key as string
      else if (isTyped(key) && key.type === 'cache_salt' && first && typeof key.salt === 'string')
        cacheSalt = key.salt
      else if (!isLora(key, loraName)) parts.push(canonical(key))
    })
    if (parts.length === 0) return
    blockExtras ??= new Array<string | null>(entries.length).fill(null)
    blockExtras[block] = parts.join(extraKeySeparator)
  })
  return { loraName, cacheSalt, blockExtras }
}

type TypedKey = { type: string } & Record<string, unknown>

function isTyped(key: unknown): key is TypedKey {
  return (
    typeof key === 'object' &&
    key !== null &&
    !Array.isArray(key) &&
    !ArrayBuffer.isView(key) &&
    typeof (key as { type?: unknown }).type === 'string'
  )
}

/** A block's keys: a tuple's elements, or a typed struct standing alone. */
function keysOf(entry: unknown): unknown[] {
  if (Array.isArray(entry))
    return entry.map((key) => (isTyped(key) && key.type === 'legacy' ? key.value : key))
  return entry === null || entry === undefined ? [] : [entry]
}

function typedLoraName(entries: readonly unknown[]): string | null {
  for (const entry of entries) {
    for (const key of keysOf(entry)) {
      if (isTyped(key) && key.type === 'lora' && typeof key.name === 'string') return key.name
    }
  }
  return null
}

function isLora(key: unknown, loraName: string | null): boolean {
  if (isTyped(key)) return key.type === 'lora'
  return loraName !== null && key === loraName
}

/** Index of the plain salt: the last bare string of the block that is not the LoRA name. */
function lastPlainSalt(keys: readonly unknown[], loraName: string | null): number {
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i]
    if (typeof key === 'string' && key !== loraName) return i
  }
  return -1
}

/**
 * One key as a string that names its kind and value: a multimodal input the same from the
 * plain pair and the typed struct, anything else by its shape.
 */
function canonical(key: unknown): string {
  if (Array.isArray(key) && key.length === 2 && typeof key[0] === 'string') {
    const offset = key[1]
    if (typeof offset === 'number' || typeof offset === 'bigint') return mmExtraKey(key[0], offset)
  }
  if (isTyped(key) && key.type === 'mm' && typeof key.hash === 'string') {
    const offset = key.block_offset
    if (typeof offset === 'number' || typeof offset === 'bigint')
      return mmExtraKey(key.hash, offset)
  }
  return `x\u0000${shapeOf(key)}`
}

function shapeOf(value: unknown): string {
  if (typeof value === 'string') return `s${value.length}:${value}`
  if (typeof value === 'number' || typeof value === 'bigint') return `n${value}`
  if (typeof value === 'boolean' || value === null || value === undefined) return String(value)
  if (value instanceof Uint8Array) {
    return `h${Array.from(value, (byte) => byte.toString(16).padStart(2, '0')).join('')}`
  }
  if (Array.isArray(value)) return `[${value.map(shapeOf).join(',')}]`
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    )
    return `{${entries.map(([k, v]) => `${shapeOf(k)}=${shapeOf(v)}`).join(',')}}`
  }
  return typeof value
}
