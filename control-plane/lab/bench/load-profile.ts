import { z } from 'zod'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

/**
 * GuideLLM's load profiles. Open loop (constant, poisson): requests leave on a schedule
 * whatever the answers. Closed loop (synchronous, concurrent, throughput): each of N
 * streams sends its next request (or next turn) when the previous one finished. Trace:
 * open loop on a trace's own timestamps, divided by `rate` (the replay speed).
 */
export const LoadProfile = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('synchronous') }),
  z.strictObject({ kind: z.literal('concurrent'), streams: z.int().min(1).max(100_000) }),
  z.strictObject({ kind: z.literal('throughput'), maxConcurrency: z.int().min(1).max(100_000) }),
  z.strictObject({ kind: z.literal('constant'), rate: z.number().positive() }),
  z.strictObject({ kind: z.literal('poisson'), rate: z.number().positive() }),
  z.strictObject({ kind: z.literal('trace'), rate: z.number().positive().default(1) }),
])
export type LoadProfile = z.infer<typeof LoadProfile>

/** The profile kinds and how --rate reads for each (GuideLLM's overloaded --rate). */
export function profileFor(kind: string, rate: number | null): LoadProfile {
  switch (kind) {
    case 'synchronous':
      return { kind }
    case 'concurrent':
      return { kind, streams: requireRate(kind, rate, true) }
    case 'throughput':
      return { kind, maxConcurrency: rate === null ? 512 : requireRate(kind, rate, true) }
    case 'constant':
    case 'poisson':
      return { kind, rate: requireRate(kind, rate, false) }
    case 'trace':
      return { kind, rate: rate === null ? 1 : requireRate(kind, rate, false) }
    default:
      throw new KinfError(
        'invalid_request',
        `unknown profile "${kind}": synchronous, concurrent, throughput, constant, poisson, trace`,
      )
  }
}

function requireRate(kind: string, rate: number | null, integer: boolean): number {
  if (rate === null || !(rate > 0) || (integer && !Number.isInteger(rate))) {
    throw new KinfError(
      'invalid_request',
      `profile ${kind} needs --rate ${integer ? 'N (streams)' : kind === 'trace' ? 'X (replay speed)' : 'R (requests/s)'}`,
    )
  }
  return rate
}

/** Streams of a closed-loop profile; null for open loop. */
export function streamsOf(profile: LoadProfile): number | null {
  if (profile.kind === 'synchronous') return 1
  if (profile.kind === 'concurrent') return profile.streams
  if (profile.kind === 'throughput') return profile.maxConcurrency
  return null
}

/** Send times (ms from start) of `count` requests of a constant or poisson profile, seeded. */
export function arrivalTimes(profile: LoadProfile, count: number, random: () => number): number[] {
  if (profile.kind !== 'constant' && profile.kind !== 'poisson') {
    throw new KinfError('internal', `${profile.kind} does not generate arrival times`)
  }
  const mean = 1000 / profile.rate
  const times: number[] = []
  let at = 0
  for (let i = 0; i < count; i++) {
    times.push(at)
    at += profile.kind === 'constant' ? mean : -Math.log(1 - random()) * mean
  }
  return times
}

/** Requests/s (constant, poisson), the replay speed (trace), streams (concurrent), else null. */
export function rateOfProfile(profile: LoadProfile): number | null {
  if (profile.kind === 'constant' || profile.kind === 'poisson' || profile.kind === 'trace')
    return profile.rate
  if (profile.kind === 'concurrent') return profile.streams
  return null
}

/** "poisson@2", "concurrent@16", "trace@0.5": how reports name a profile at a rate. */
export function describeProfile(profile: LoadProfile): string {
  if (profile.kind === 'constant' || profile.kind === 'poisson' || profile.kind === 'trace')
    return `${profile.kind}@${profile.rate}`
  const streams = streamsOf(profile)
  return profile.kind === 'synchronous' ? 'synchronous' : `${profile.kind}@${streams}`
}
