/**
 * Share of answers, as a moving average over about the last 1/missAlpha, whose reported
 * cached tokens exceeded what the index said the pod held: the pod's KV events arrive late
 * or not at all. In the DES on shared-prefix near its bound, a fresh feed misses a few
 * requests in a thousand; events 500 ms late with a tenth lost, 3-8% of them.
 */
const missAlpha = 0.05
/**
 * The miss share that holds a pod's feed lossy again once it was let go: two misses within
 * some 30 answers (0.05 × 0.95^30 + 0.05 ≈ 0.061), not one. A single miss is what a
 * complete feed shows now and then; a lossy one soon shows two.
 */
const reopenMissShare = 0.06
/**
 * Answers a new pod's feed is held lossy for: the routing of its first minute decides
 * where the prefixes live, and a batch of events lost then is never replayed, so a feed
 * is taken as lossy until its answers have had the chance to show it. About as long as
 * the moving average above took to fall from 1 to 0.005.
 */
const firstHoldAnswers = 100
/** The longest hold: the pool's TTL is tried again at least this often (answers). */
const maxHoldAnswers = 1_600

/**
 * Whether a pod's KV-event feed is taken as late or lossy, judged from its answers.
 *
 * The long speculative entries a lossy feed gets cover what its lost events would have
 * shown, so while they last the answers cannot show the feed lossy. Judged on the moving
 * share alone, a lossy pod went back to short entries after a stretch of quiet answers,
 * lost its prefixes' chains, missed, and went long again, over and over; and a complete
 * feed's rare single miss made it long for a while. So the verdict is held for a number
 * of answers: a new pod's first hold, then, each time its answers show misses again once
 * let go, a hold twice the last (up to maxHoldAnswers). A lossy feed thus spends most of
 * its time held, trying the pool's TTL for shorter and shorter stretches; a complete one
 * is let go after its first hold and stays so.
 */
export class FeedLossTracker {
  private answers = 0
  private misses = 0
  private heldUntil = firstHoldAnswers
  private nextHold = 2 * firstHoldAnswers

  /** One answer: whether it found more cached than the index said. */
  observe(missed: boolean): void {
    this.answers++
    this.misses += missAlpha * ((missed ? 1 : 0) - this.misses)
    if (this.lossy() || this.misses < reopenMissShare) return
    this.heldUntil = this.answers + this.nextHold
    this.nextHold = Math.min(maxHoldAnswers, 2 * this.nextHold)
  }

  /** Whether the feed is held lossy now. */
  lossy(): boolean {
    return this.answers < this.heldUntil
  }
}
