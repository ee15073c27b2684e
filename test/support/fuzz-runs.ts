import type { Parameters } from 'fast-check'

/**
 * How hard the fuzz targets (test/**\/*.fuzz.test.ts) push: FUZZ_RUNS cases each when set
 * (`npm run fuzz`), else the target's CI default. FUZZ_SEED replaces every target's fixed
 * seed, to explore further; a failure prints the seed and path that reproduce it.
 */
const configuredRuns = Number(process.env.FUZZ_RUNS ?? Number.NaN)
const configuredSeed = Number(process.env.FUZZ_SEED ?? Number.NaN)

/** Cases for a target whose CI default is `ciRuns`. */
export function fuzzRuns(ciRuns: number): number {
  return Number.isInteger(configuredRuns) && configuredRuns > 0 ? configuredRuns : ciRuns
}

/** fast-check's parameters for a target: its runs, and its fixed seed unless FUZZ_SEED is set. */
export function fuzzParameters<T>(ciRuns: number, seed: number): Parameters<T> {
  return {
    numRuns: fuzzRuns(ciRuns),
    seed: Number.isInteger(configuredSeed) ? configuredSeed : seed,
  }
}

/**
 * The vitest timeout of a target: 30 s at its CI runs, scaled with the runs asked for, so
 * a hang (or a super-linear blowup) still fails it while a long `npm run fuzz` does not.
 */
export function fuzzTimeoutMs(ciRuns: number): number {
  return 30_000 * Math.max(1, Math.ceil(fuzzRuns(ciRuns) / ciRuns))
}
