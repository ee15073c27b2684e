/**
 * How many requests may still use something (a pool runtime being replaced), and a wait
 * for the moment none does.
 */
export class UsageCount {
  private users = 0
  private waiters: (() => void)[] = []

  get count(): number {
    return this.users
  }

  enter(): void {
    this.users++
  }

  leave(): void {
    if (this.users === 0) return
    if (--this.users > 0) return
    for (const wake of this.waiters.splice(0)) wake()
  }

  /** Settles when nobody uses it (at once if nobody does). */
  idle(): Promise<void> {
    if (this.users === 0) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }
}
