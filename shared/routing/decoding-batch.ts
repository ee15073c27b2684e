/**
 * The context of a pod's decoding batch: the prompts and generated tokens of the requests
 * past their first token, what every decode step reads. Requests still waiting for their
 * prefill (or for KV memory) are not in it; counted, they made a pod whose queue grew look
 * like one whose steps got cheaper per token. Kept with its time-integral: the difference
 * between two readings over the time between them is the mean context a request decoding
 * meanwhile shared its steps with (OnlineStepCost's regressor).
 */
export class DecodingBatch {
  private context = 0
  /** ∫ context dt (token·ms) up to `integratedToMs`. */
  private contextTokenMs = 0
  private integratedToMs = Number.NEGATIVE_INFINITY

  /** Tokens of context the batch holds now. */
  get tokens(): number {
    return this.context
  }

  /**
   * The integral to `nowMs`. A time before the last reading (a caller's clocks a network
   * delay apart) integrates nothing.
   */
  integral(nowMs: number): number {
    if (nowMs > this.integratedToMs) {
      if (Number.isFinite(this.integratedToMs))
        this.contextTokenMs += this.context * (nowMs - this.integratedToMs)
      this.integratedToMs = nowMs
    }
    return this.contextTokenMs
  }

  /** `tokens` more (fewer, when negative) from `nowMs`, or from the last reading when unknown. */
  add(tokens: number, nowMs?: number): void {
    if (nowMs !== undefined) this.integral(nowMs)
    this.context += tokens
  }
}
