/**
 * Runs `run` once a burst of triggers has been quiet for `delayMs`, or `maxDelayMs` after
 * the first trigger, whichever comes first, never two at once: a trigger during a run
 * schedules one more run after it. So a storm of watch events costs a few reconciles.
 */
export function createDebouncedRunner(options: {
  delayMs: number
  maxDelayMs: number
  run: () => Promise<void>
  onError: (error: unknown) => void
}) {
  let timer: ReturnType<typeof setTimeout> | null = null
  let firstAtMs: number | null = null
  let running: Promise<void> | null = null
  let again = false
  let closed = false

  const fire = () => {
    timer = null
    firstAtMs = null
    if (running) {
      again = true
      return
    }
    running = options
      .run()
      .catch(options.onError)
      .finally(() => {
        running = null
        if (again && !closed) {
          again = false
          trigger()
        }
      })
  }

  const trigger = () => {
    if (closed) return
    const now = Date.now()
    firstAtMs ??= now
    if (timer) clearTimeout(timer)
    const wait = Math.max(0, Math.min(options.delayMs, firstAtMs + options.maxDelayMs - now))
    timer = setTimeout(fire, wait)
  }

  return {
    trigger,
    /** Resolves once no run is under way or pending. */
    async idle(): Promise<void> {
      while (running || timer) await (running ?? new Promise((r) => setTimeout(r, 5)))
    },
    async close(): Promise<void> {
      closed = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
