import { describe, expect, it } from 'vitest'
import { FeedLossTracker } from '../../../shared/routing/feed-loss-tracker.ts'

/** Answers until the tracker lets the feed go, or `limit` answers; how many it took. */
function answersUntilLetGo(feed: FeedLossTracker, limit = 10_000): number {
  let answers = 0
  while (feed.lossy() && answers < limit) {
    feed.observe(false)
    answers++
  }
  return answers
}

/** Two misses in a row: what a lossy feed soon shows once its entries are short again. */
function missTwice(feed: FeedLossTracker): void {
  feed.observe(true)
  feed.observe(true)
}

describe('FeedLossTracker', () => {
  it('holds a new pod’s feed lossy for its first hundred answers', () => {
    const feed = new FeedLossTracker()
    expect(feed.lossy()).toBe(true)
    expect(answersUntilLetGo(feed)).toBe(100)
    expect(feed.lossy()).toBe(false)
  })

  it('does not hold a complete feed again for a lone miss now and then', () => {
    const feed = new FeedLossTracker()
    answersUntilLetGo(feed)
    for (let i = 0; i < 2_000; i++) {
      feed.observe(i % 200 === 0)
      expect(feed.lossy()).toBe(false)
    }
  })

  it('holds a feed that misses again for twice as long each time, up to 1,600 answers', () => {
    const feed = new FeedLossTracker()
    answersUntilLetGo(feed)
    const holds: number[] = []
    for (let i = 0; i < 6; i++) {
      missTwice(feed)
      expect(feed.lossy()).toBe(true)
      // The answers it was held for after the second miss.
      holds.push(answersUntilLetGo(feed))
      // Quiet answers let the moving share fall back before the next misses.
      for (let j = 0; j < 100; j++) feed.observe(false)
    }
    expect(holds).toEqual([200, 400, 800, 1_600, 1_600, 1_600])
  })

  it('holds the feed again at once when misses went on through the hold', () => {
    const feed = new FeedLossTracker()
    answersUntilLetGo(feed)
    missTwice(feed)
    // Misses all through the 200 answers' hold (the long entries did not cover them).
    for (let i = 0; i < 200; i++) feed.observe(true)
    expect(feed.lossy()).toBe(true)
    expect(answersUntilLetGo(feed)).toBe(400)
  })
})
