import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { arrivalTimes, type LoadProfile } from './load-profile.ts'
import type { Workload } from './workload.ts'

/** One conversation's start in an open-loop run. */
export interface ScheduledStart {
  /** ms from the run's start. */
  atMs: number
  conversation: number
}

/**
 * When each of the first `count` conversations starts, in time order (ties by
 * conversation). A trace profile replays the trace's timestamps divided by its speed.
 * Fan-out data turns the profile's process into bursts: burst b (conversations b·size …
 * b·size + size − 1) arrives at the b-th time of the same profile at rate / size, each
 * sibling uniformly within the window after it, so bursts can overlap and the order is
 * by time, not by conversation. Anything else is the profile's own arrivals.
 */
export function openLoopSchedule(
  profile: LoadProfile,
  workload: Workload,
  count: number,
  random: () => number,
): ScheduledStart[] {
  const limit = Math.min(count, workload.size ?? count)
  if (profile.kind === 'trace') {
    const stamps = workload.timestampsMs
    if (stamps === null)
      throw new KinfError('invalid_request', 'profile trace replays a trace: use --data trace:FILE')
    return stamps.slice(0, limit).map((at, conversation) => ({
      atMs: at / profile.rate,
      conversation,
    }))
  }
  const fanOut = workload.fanOut
  if (fanOut === null)
    return arrivalTimes(profile, limit, random).map((atMs, conversation) => ({
      atMs,
      conversation,
    }))
  if (profile.kind !== 'poisson' && profile.kind !== 'constant')
    throw new KinfError('internal', `${profile.kind} is a closed-loop profile`)
  const bursts = arrivalTimes(
    { kind: profile.kind, rate: profile.rate / fanOut.size },
    Math.ceil(limit / fanOut.size),
    random,
  )
  const starts: ScheduledStart[] = []
  bursts.forEach((burstMs, burst) => {
    for (let sibling = 0; sibling < fanOut.size; sibling++) {
      const conversation = burst * fanOut.size + sibling
      if (conversation >= limit) break
      starts.push({ atMs: burstMs + random() * fanOut.windowMs, conversation })
    }
  })
  return starts.sort((a, b) => a.atMs - b.atMs || a.conversation - b.conversation)
}
