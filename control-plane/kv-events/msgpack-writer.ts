import { KinfError } from '../../shared/errors/kinf-error.ts'

/**
 * A msgpack writer that chooses formats exactly as msgspec does (`mpack_encode_*` in
 * msgspec/_core.c), which @msgpack/msgpack cannot be told to do: it writes an
 * integer-valued float as an int and every bigint as 9 bytes.
 * - ints: the smallest format; non-negative ones always unsigned (fixint, cc, cd, ce, cf),
 *   so a uint64 hash below 2^63 is still `cf`, never `d3`; negative: e0-ff, d0, d1, d2, d3.
 * - float: always float64 (`cb`).
 * - str: fixstr, then str8 (`d9`), str16, str32; bin: bin8, bin16, bin32.
 * - array and map headers: fix form below 16 entries, then 16-bit, then 32-bit.
 */
export interface MsgpackWriter {
  nil(): void
  int(value: number | bigint): void
  float64(value: number): void
  str(value: string): void
  bin(value: Uint8Array): void
  arrayHeader(length: number): void
  mapHeader(length: number): void
  /** Any plain value: null, boolean, safe integer, other number (float64), bigint, string, Uint8Array, array, plain object. */
  value(value: unknown): void
  /** The bytes written so far (a copy-free view). */
  finish(): Uint8Array
}

const maxDepth = 64

interface Tags {
  tag8?: number
  tag16: number
  tag32: number
}
// str and bin have an 8-bit length form; arrays and maps go from fix straight to 16-bit.
const strTags: Tags = { tag8: 0xd9, tag16: 0xda, tag32: 0xdb }
const binTags: Tags = { tag8: 0xc4, tag16: 0xc5, tag32: 0xc6 }
const arrayTags: Tags = { tag16: 0xdc, tag32: 0xdd }
const mapTags: Tags = { tag16: 0xde, tag32: 0xdf }
const utf8 = new TextEncoder()

export function createMsgpackWriter(initialSize = 256): MsgpackWriter {
  let bytes = new Uint8Array(initialSize)
  let view = new DataView(bytes.buffer)
  let length = 0

  function reserve(extra: number): number {
    if (length + extra > bytes.length) {
      const grown = new Uint8Array(Math.max(bytes.length * 2, length + extra))
      grown.set(bytes.subarray(0, length))
      bytes = grown
      view = new DataView(bytes.buffer)
    }
    const at = length
    length += extra
    return at
  }

  function u8(byte: number): void {
    const at = reserve(1) // before reading `bytes`: reserve may replace it
    bytes[at] = byte
  }

  function head8(tag: number, value: number): void {
    const at = reserve(2)
    bytes[at] = tag
    bytes[at + 1] = value
  }

  function head16(tag: number, value: number): void {
    const at = reserve(3)
    bytes[at] = tag
    view.setUint16(at + 1, value)
  }

  function head32(tag: number, value: number): void {
    const at = reserve(5)
    bytes[at] = tag
    view.setUint32(at + 1, value)
  }

  function int(value: number | bigint): void {
    if (typeof value === 'bigint') {
      if (value >= -(1n << 31n) && value < 1n << 32n) {
        int(Number(value))
        return
      }
      if (value < -(1n << 63n) || value >= 1n << 64n) {
        throw new KinfError('internal', `msgpack: integer ${value} does not fit in 64 bits`)
      }
      const at = reserve(9)
      bytes[at] = value >= 0n ? 0xcf : 0xd3
      if (value >= 0n) view.setBigUint64(at + 1, value)
      else view.setBigInt64(at + 1, value)
      return
    }
    if (!Number.isSafeInteger(value)) {
      throw new KinfError('internal', `msgpack: ${value} is not a safe integer`)
    }
    if (value >= 0) {
      if (value < 0x80) u8(value)
      else if (value < 0x100) head8(0xcc, value)
      else if (value < 0x10000) head16(0xcd, value)
      else if (value < 0x100000000) head32(0xce, value)
      else int(BigInt(value))
    } else if (value >= -32) u8(value & 0xff)
    else if (value >= -0x80) head8(0xd0, value & 0xff)
    else if (value >= -0x8000) head16(0xd1, value & 0xffff)
    else if (value >= -0x80000000) head32(0xd2, value >>> 0)
    else int(BigInt(value))
  }

  function float64(value: number): void {
    const at = reserve(9)
    bytes[at] = 0xcb
    view.setFloat64(at + 1, value)
  }

  function header(n: number, fix: number, fixLimit: number, tags: Tags): void {
    if (!Number.isSafeInteger(n) || n < 0 || n > 0xffffffff) {
      throw new KinfError('internal', `msgpack: length ${n} out of range`)
    }
    if (n < fixLimit) u8(fix | n)
    else if (n < 0x100 && tags.tag8 !== undefined) head8(tags.tag8, n)
    else if (n < 0x10000) head16(tags.tag16, n)
    else head32(tags.tag32, n)
  }

  function str(text: string): void {
    const encoded = utf8.encode(text)
    header(encoded.length, 0xa0, 32, strTags)
    const at = reserve(encoded.length)
    bytes.set(encoded, at)
  }

  function bin(data: Uint8Array): void {
    header(data.length, 0, 0, binTags)
    const at = reserve(data.length)
    bytes.set(data, at)
  }

  const arrayHeader = (n: number) => header(n, 0x90, 16, arrayTags)
  const mapHeader = (n: number) => header(n, 0x80, 16, mapTags)

  function value(item: unknown, depth = 0): void {
    if (depth > maxDepth) throw new KinfError('internal', `msgpack: nested deeper than ${maxDepth}`)
    if (item === null || item === undefined) u8(0xc0)
    else if (typeof item === 'boolean') u8(item ? 0xc3 : 0xc2)
    else if (typeof item === 'bigint') int(item)
    else if (typeof item === 'number') Number.isSafeInteger(item) ? int(item) : float64(item)
    else if (typeof item === 'string') str(item)
    else if (item instanceof Uint8Array) bin(item)
    else if (Array.isArray(item)) {
      arrayHeader(item.length)
      for (const element of item) value(element, depth + 1)
    } else if (typeof item === 'object' && Object.getPrototypeOf(item) === Object.prototype) {
      const entries = Object.entries(item)
      mapHeader(entries.length)
      for (const [key, element] of entries) {
        str(key)
        value(element, depth + 1)
      }
    } else {
      throw new KinfError('internal', `msgpack: cannot encode a ${typeof item}`)
    }
  }

  return {
    nil: () => u8(0xc0),
    int,
    float64,
    str,
    bin,
    arrayHeader,
    mapHeader,
    value: (item) => value(item),
    finish: () => bytes.subarray(0, length),
  }
}
