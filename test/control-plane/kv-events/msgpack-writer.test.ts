import { decode } from '@msgpack/msgpack'
import { describe, expect, it } from 'vitest'
import { createMsgpackWriter } from '../../../control-plane/kv-events/msgpack-writer.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { hex } from './wire-example.ts'

const written = (write: (writer: ReturnType<typeof createMsgpackWriter>) => void) => {
  // A 1-byte start forces the buffer to grow mid-write, every time.
  const writer = createMsgpackWriter(1)
  write(writer)
  return hex(writer.finish())
}

describe('createMsgpackWriter', () => {
  // Boundaries of msgspec's mpack_encode_long.
  it.each([
    [0, '00'],
    [127, '7f'],
    [128, 'cc80'],
    [255, 'ccff'],
    [256, 'cd0100'],
    [65_535, 'cdffff'],
    [65_536, 'ce00010000'],
    [2 ** 32 - 1, 'ceffffffff'],
    [2 ** 32, 'cf0000000100000000'],
    [Number.MAX_SAFE_INTEGER, 'cf001fffffffffffff'],
    [-1, 'ff'],
    [-32, 'e0'],
    [-33, 'd0df'],
    [-128, 'd080'],
    [-129, 'd1ff7f'],
    [-32_768, 'd18000'],
    [-32_769, 'd2ffff7fff'],
    [-(2 ** 31), 'd280000000'],
    [-(2 ** 31) - 1, 'd3ffffffff7fffffff'],
  ])('writes the int %d as %s', (value, expected) => {
    expect(written((w) => w.int(value))).toBe(expected)
    expect(written((w) => w.int(BigInt(value)))).toBe(expected)
  })

  it('writes 64-bit bigints beyond the safe range', () => {
    expect(written((w) => w.int((1n << 64n) - 1n))).toBe('cfffffffffffffffff')
    expect(written((w) => w.int(-(1n << 63n)))).toBe('d38000000000000000')
    expect(() => written((w) => w.int(1n << 64n))).toThrow(KinfError)
    expect(() => written((w) => w.int(-(1n << 63n) - 1n))).toThrow(KinfError)
    expect(() => written((w) => w.int(1.5))).toThrow(KinfError)
  })

  it.each([
    [0, 'a0'],
    [31, 'bf'],
    [32, 'd920'],
    [255, 'd9ff'],
    [256, 'da0100'],
    [65_536, 'db00010000'],
  ])('writes a string of %d bytes with header %s', (length, header) => {
    const text = 'x'.repeat(length)
    expect(written((w) => w.str(text))).toBe(header + Buffer.from(text).toString('hex'))
  })

  it('writes bin, array and map headers in their smallest form', () => {
    expect(written((w) => w.bin(new Uint8Array([1, 2])))).toBe('c4020102')
    expect(written((w) => w.bin(new Uint8Array(256))).slice(0, 6)).toBe('c50100')
    expect(written((w) => w.arrayHeader(15))).toBe('9f')
    expect(written((w) => w.arrayHeader(16))).toBe('dc0010')
    expect(written((w) => w.arrayHeader(65_536))).toBe('dd00010000')
    expect(written((w) => w.mapHeader(15))).toBe('8f')
    expect(written((w) => w.mapHeader(16))).toBe('de0010')
  })

  it('writes plain values that any msgpack reader reads back', () => {
    const value = { a: [1, -2, 1.5, 'é', null, true, false, new Uint8Array([9])], b: {} }
    const bytes = createMsgpackWriter()
    bytes.value(value)
    expect(decode(bytes.finish())).toEqual(value)
  })

  it('refuses values msgpack cannot carry, and runaway nesting', () => {
    expect(() => written((w) => w.value(new Date(0)))).toThrow(KinfError)
    expect(() => written((w) => w.value(() => 1))).toThrow(KinfError)
    let deep: unknown = null
    for (let i = 0; i < 100; i++) deep = [deep]
    expect(() => written((w) => w.value(deep))).toThrow(/deeper than 64/)
  })
})
