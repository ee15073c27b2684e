/**
 * The discrete-event simulation's agenda: a binary min-heap on (time, insertion order),
 * so events at the same virtual time run in the order they were scheduled and a seed
 * gives the same run every time.
 */
export class EventQueue<Event> {
  private readonly times: number[] = []
  private readonly orders: number[] = []
  private readonly events: Event[] = []
  private next = 0

  get size(): number {
    return this.events.length
  }

  push(time: number, event: Event): void {
    this.times.push(time)
    this.orders.push(this.next++)
    this.events.push(event)
    let i = this.events.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(i, parent)) break
      this.swap(i, parent)
      i = parent
    }
  }

  /** The earliest event and its time; undefined when empty. */
  pop(): { time: number; event: Event } | undefined {
    if (this.events.length === 0) return undefined
    const time = this.times[0] as number
    const event = this.events[0] as Event
    const last = this.events.length - 1
    this.swap(0, last)
    this.times.pop()
    this.orders.pop()
    this.events.pop()
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      const right = left + 1
      let smallest = i
      if (left < this.events.length && this.before(left, smallest)) smallest = left
      if (right < this.events.length && this.before(right, smallest)) smallest = right
      if (smallest === i) break
      this.swap(i, smallest)
      i = smallest
    }
    return { time, event }
  }

  private before(a: number, b: number): boolean {
    const ta = this.times[a] as number
    const tb = this.times[b] as number
    return ta < tb || (ta === tb && (this.orders[a] as number) < (this.orders[b] as number))
  }

  private swap(a: number, b: number): void {
    ;[this.times[a], this.times[b]] = [this.times[b] as number, this.times[a] as number]
    ;[this.orders[a], this.orders[b]] = [this.orders[b] as number, this.orders[a] as number]
    ;[this.events[a], this.events[b]] = [this.events[b] as Event, this.events[a] as Event]
  }
}
