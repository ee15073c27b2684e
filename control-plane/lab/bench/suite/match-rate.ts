/**
 * The item whose value is closest to `target` as a ratio (the lower rate first on a tie):
 * how a rate "matching" a published TTFT is picked.
 */
export function closestByRatio<T extends { rate: number }>(
  items: readonly T[],
  measure: (item: T) => number,
  target: number,
): T | undefined {
  const distance = (item: T) => Math.abs(Math.log(measure(item) / target))
  return [...items].sort((a, b) => distance(a) - distance(b) || a.rate - b.rate)[0]
}

/** A probe: a router's median TTFT (s) at an offered rate. */
export type MedianAt = (rate: number) => Promise<number>

export interface MatchedRate {
  /** The probed rate whose median TTFT was closest, as a ratio, to the target. */
  rate: number
  medianS: number
  probes: { rate: number; medianS: number }[]
}

/**
 * The offered rate at which one router's median TTFT matches `targetS` (the published
 * round-robin figure, whose rate the article does not give): bisection in log-rate between
 * `low` (expected under the target) and `high` (expected over it) for `steps` probes,
 * returning the probe closest to the target. Median TTFT grows with the rate, though not
 * strictly run to run; the closest probe is what is reported, with every probe.
 */
export async function matchRate(
  medianAt: MedianAt,
  targetS: number,
  low: number,
  high: number,
  steps = 8,
  /** The load a rate is run at (whole streams for a closed loop). */
  loadOf: (rate: number) => number = (rate) => rate,
): Promise<MatchedRate> {
  const probes: MatchedRate['probes'] = []
  const probe = async (mid: number) => {
    const rate = loadOf(mid)
    const medianS = await medianAt(rate)
    probes.push({ rate, medianS })
    return medianS
  }
  let lo = low
  let hi = high
  for (let i = 0; i < steps; i++) {
    const mid = Number(Math.sqrt(lo * hi).toPrecision(3))
    if ((await probe(mid)) > targetS) hi = mid
    else lo = mid
  }
  const best = closestByRatio(probes, (p) => p.medianS, targetS)
  return { rate: best?.rate ?? low, medianS: best?.medianS ?? Number.NaN, probes }
}
