/**
 * The 32-bit mixing steps of MurmurHash3, used wherever the project chains its own hashes
 * (block keys, the simulator's block hashes, GIE's character blocks): well mixed, and
 * plain 32-bit integer arithmetic, so no BigInt on hot paths.
 */

/** One round: folds `value` into the running hash `h`. */
export function mix32(h: number, value: number): number {
  let k = Math.imul(value, 0xcc9e2d51)
  k = (k << 15) | (k >>> 17)
  k = Math.imul(k, 0x1b873593)
  let x = h ^ k
  x = (x << 13) | (x >>> 19)
  return (Math.imul(x, 5) + 0xe6546b64) | 0
}

/** The finalizer: every input bit reaches every output bit. Unsigned result. */
export function avalanche32(h: number): number {
  let x = h
  x ^= x >>> 16
  x = Math.imul(x, 0x85ebca6b)
  x ^= x >>> 13
  x = Math.imul(x, 0xc2b2ae35)
  x ^= x >>> 16
  return x >>> 0
}

/** Folds a string (its UTF-16 code units, then its length) into `h`. */
export function mixText32(h: number, text: string): number {
  let x = h
  for (let i = 0; i < text.length; i++) x = mix32(x, text.charCodeAt(i))
  return mix32(x, text.length)
}
