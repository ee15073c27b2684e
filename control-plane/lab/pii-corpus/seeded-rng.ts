import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'

/** Uniform in [0, 1) like Math.random, but from a seed, so a corpus can be made again exactly. */
export type Rng = () => number

/** The project's mulberry32 (shared/random/create-seeded-random.ts). */
export const seededRng = (seed: number): Rng => createSeededRandom(seed)

export const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1))
export const pick = <T>(rng: Rng, items: readonly T[]): T =>
  items[int(rng, 0, items.length - 1)] as T
export const digits = (rng: Rng, n: number) =>
  Array.from({ length: n }, () => int(rng, 0, 9)).join('')
export const hex = (rng: Rng, n: number) =>
  Array.from({ length: n }, () => '0123456789abcdef'.charAt(int(rng, 0, 15))).join('')
export const pad = (n: number, width: number) => String(n).padStart(width, '0')
