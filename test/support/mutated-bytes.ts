import fc from 'fast-check'

/**
 * Valid bytes changed the ways corrupt frames come: cut short, a byte flipped or replaced,
 * a run of random bytes written over or spliced in, a stretch dropped or doubled. Mutating
 * valid input reaches far deeper into a decoder than random bytes do.
 */
export function mutatedBytes(valid: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  const edit = fc.oneof(
    fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat(7) }),
    fc.record({
      kind: fc.constant('set' as const),
      at: fc.nat(),
      byte: fc.constantFrom(0x00, 0x7f, 0x80, 0xc1, 0xdc, 0xdd, 0xde, 0xdf, 0xff),
    }),
    fc.record({
      kind: fc.constant('overwrite' as const),
      at: fc.nat(),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
    }),
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
    }),
    fc.record({
      kind: fc.constant('drop' as const),
      at: fc.nat(),
      length: fc.integer({ min: 1, max: 16 }),
    }),
    fc.record({
      kind: fc.constant('repeat' as const),
      at: fc.nat(),
      length: fc.integer({ min: 1, max: 16 }),
    }),
  )
  return fc
    .tuple(valid, fc.array(edit, { minLength: 1, maxLength: 3 }))
    .map(([bytes, edits]) => edits.reduce(applyEdit, bytes))
}

type Edit =
  | { kind: 'truncate'; at: number }
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'overwrite' | 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'drop' | 'repeat'; at: number; length: number }

function applyEdit(bytes: Uint8Array, edit: Edit): Uint8Array {
  if (bytes.length === 0) return edit.kind === 'insert' ? edit.bytes : bytes
  const at = edit.at % bytes.length
  const join = (...parts: Uint8Array[]) => {
    const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
    let offset = 0
    for (const part of parts) {
      out.set(part, offset)
      offset += part.length
    }
    return out
  }
  switch (edit.kind) {
    case 'truncate':
      return bytes.slice(0, at)
    case 'flip':
    case 'set': {
      const out = bytes.slice()
      out[at] = edit.kind === 'flip' ? (out[at] ?? 0) ^ (1 << edit.bit) : edit.byte
      return out
    }
    case 'overwrite': {
      const out = bytes.slice()
      out.set(edit.bytes.subarray(0, out.length - at), at)
      return out
    }
    case 'insert':
      return join(bytes.subarray(0, at), edit.bytes, bytes.subarray(at))
    case 'drop':
      return join(bytes.subarray(0, at), bytes.subarray(at + edit.length))
    case 'repeat':
      return join(bytes.subarray(0, at + edit.length), bytes.subarray(at))
  }
}
