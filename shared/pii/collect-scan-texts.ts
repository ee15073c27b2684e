import { maxJsonDepth } from '../openai/json-depth.ts'
import { base64Texts, dataUrlOf, escapeDecoded } from './decode-hidden-text.ts'
import { normalizeForScan } from './normalize-for-scan.ts'

/** Every text a request carries, as the detectors should read it. */
export interface ScanTexts {
  /** Normalised (normalize-for-scan.ts), each once. */
  texts: string[]
  /**
   * Why some of the request could not be read (an image, a binary payload, text encoded
   * too deep or too much of it); null when all of it was. A request with unreadable parts
   * must count as carrying anything (fail closed).
   */
  unreadable: string | null
}

export interface CollectScanTextsOptions {
  /** Characters scanned in all, decoded text included; past it the rest is unreadable. */
  budget: number
}

/**
 * Nesting deeper than this (structure plus JSON decoded from strings) is not read: the
 * bound a request body has at the edge and the scorer.
 */
export const maxScanDepth = maxJsonDepth
/** Decoding inside decoded text (base64 of JSON of base64 ...) stops after this many layers. */
const maxDecodeLayers = 3

/**
 * Content parts whose payload the detectors cannot read: OpenAI's part types, and
 * Converse's blocks (a one-key object) for images, documents, audio and video.
 */
const mediaPartTypes = new Set([
  'image_url',
  'input_image',
  'input_audio',
  'audio_url',
  'video_url',
  'file',
  'input_file',
])
const mediaBlocks = new Set(['image', 'document', 'audio', 'video'])
/** Keys that are plain identifiers this short carry no PII of the built-in kinds: not scanned. */
const plainKey = /^[A-Za-z_][A-Za-z0-9_]{0,15}$/
/**
 * Fields that name what something is rather than carry content (a message's role, a part's
 * type, the model asked for, which no provider is sent): their values are not scanned
 * while they look like names, so a broad custom pattern does not match "user" or a model.
 */
const namingKeys = new Set(['role', 'type', 'model'])
const plainName = /^[A-Za-z0-9_.:/-]{1,128}$/

/**
 * Collects, from each value (a parsed JSON request, or the request a provider would be
 * sent), every string, number and unusual object key, with what hides inside them
 * decoded: JSON inside strings (tool-call arguments), escapes, base64 text, data: URLs.
 * Adjacent text pieces of one array (content parts, system blocks, merged turns) are
 * also read joined, as a model reads them. Iterative, so depth cannot overflow the stack.
 */
export function collectScanTexts(
  values: readonly unknown[],
  options: CollectScanTextsOptions,
): ScanTexts {
  const collector = new Collector(options.budget)
  for (const value of values) collector.walk(value, 0, 0)
  return { texts: [...collector.texts], unreadable: collector.unreadable }
}

class Collector {
  readonly texts = new Set<string>()
  private readonly seen = new Set<string>()
  unreadable: string | null = null
  private budget: number

  constructor(budget: number) {
    this.budget = budget
  }

  walk(root: unknown, rootDepth: number, layers: number): void {
    const stack: { value: unknown; depth: number }[] = [{ value: root, depth: rootDepth }]
    for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
      const { value, depth } = item
      if (typeof value === 'string') this.text(value, depth, layers)
      else if (typeof value === 'number' || typeof value === 'bigint') this.add(String(value))
      else if (typeof value !== 'object' || value === null) continue
      else if (depth >= maxScanDepth) this.cannotRead('content nested too deeply to scan')
      else if (Array.isArray(value)) {
        for (const element of value) {
          const media = mediaOf(element)
          if (media !== null) this.cannotRead(media)
          else stack.push({ value: element, depth: depth + 1 })
        }
        this.joined(value, depth, layers)
      } else
        for (const [key, child] of Object.entries(value)) {
          if (!plainKey.test(key)) this.text(key, depth, layers)
          if (namingKeys.has(key) && typeof child === 'string' && plainName.test(child)) continue
          stack.push({ value: child, depth: depth + 1 })
        }
    }
  }

  /** A string, and whatever it decodes to. */
  private text(value: string, depth: number, layers: number): void {
    if (!this.add(value) || layers >= maxDecodeLayers) return
    const data = dataUrlOf(value)
    if (data !== null) {
      if (data.text === null) this.cannotRead(`a ${data.mediaType} data: URL`)
      else this.text(data.text, depth, layers + 1)
      return
    }
    const json = jsonIn(value)
    if (json !== undefined) this.walk(json, depth + 1, layers + 1)
    else {
      const unescaped = escapeDecoded(value)
      if (unescaped !== null) this.text(unescaped, depth, layers + 1)
    }
    for (const decoded of base64Texts(value)) this.text(decoded, depth, layers + 1)
  }

  /** Text pieces next to each other in one array, read as one (with and without a space). */
  private joined(array: readonly unknown[], depth: number, layers: number): void {
    let run: string[] = []
    const flush = () => {
      if (run.length > 1) {
        this.text(run.join(''), depth, layers)
        this.text(run.join(' '), depth, layers)
      }
      run = []
    }
    for (const element of array) {
      const piece = textPiece(element)
      if (piece === null) flush()
      else run.push(piece)
    }
    flush()
  }

  /**
   * Counts `value` against the budget and keeps it; false once the budget is spent or when
   * it was read already (a provider's view repeats the request's strings).
   */
  private add(value: string): boolean {
    if (this.seen.has(value)) return false
    this.seen.add(value)
    this.budget -= value.length
    if (this.budget < 0) {
      this.cannotRead('more text than the scan reads')
      return false
    }
    this.texts.add(normalizeForScan(value))
    return true
  }

  private cannotRead(why: string): void {
    this.unreadable ??= why
  }
}

/** A string, or the `text` of a text part or block; null for anything else. */
function textPiece(element: unknown): string | null {
  if (typeof element === 'string') return element
  if (typeof element !== 'object' || element === null) return null
  const text = (element as { text?: unknown }).text
  return typeof text === 'string' ? text : null
}

/** Why a content part cannot be read (its kind), or null when it is not media. */
function mediaOf(element: unknown): string | null {
  if (typeof element !== 'object' || element === null || Array.isArray(element)) return null
  const type = (element as { type?: unknown }).type
  if (typeof type === 'string' && mediaPartTypes.has(type)) return `a content part of type ${type}`
  const keys = Object.keys(element)
  if (keys.length === 1 && mediaBlocks.has(keys[0] as string)) return `an ${keys[0]} block`
  return null
}

/** The JSON value a string holds when it is a JSON object, array or string; else undefined. */
function jsonIn(value: string): unknown {
  const first = value.trimStart()[0]
  if (first !== '{' && first !== '[' && first !== '"') return undefined
  try {
    return JSON.parse(value)
  } catch {
    return undefined
  }
}
