import type { EngineKvEvent } from './engine/block-pool.ts'
import type {
  EngineRequestInput,
  StepResult,
  TokenOutput,
  VllmEngine,
} from './engine/vllm-engine.ts'

/** What a request's owner hears from the engine, in modelled (virtual) milliseconds. */
export interface RequestListener {
  onStart(numCachedTokens: number, virtualMs: number): void
  onToken(output: TokenOutput, virtualMs: number): void
}

export interface DriverHooks {
  /** After each step: its KV events (one batch) and what it did, at its virtual end time. */
  onStep(step: StepResult, endVirtualMs: number): void
  onEvents(events: EngineKvEvent[]): void
}

export interface LagStats {
  steps: number
  /** How far behind its own clock the driver woke up, in real ms. */
  maxMs: number
  p99Ms: number
  meanMs: number
}

/**
 * Runs an engine against the wall clock at `timeScale` times the modelled GPU speed.
 * Each step is scheduled to end at an absolute time (start + virtual end / scale), so
 * small timer errors do not accumulate; when the process cannot keep up, steps run back
 * to back and the lag is recorded instead of silently stretching modelled time.
 */
export class RealTimeDriver {
  private readonly engine: VllmEngine
  private readonly timeScale: number
  private readonly hooks: DriverHooks
  private readonly listeners = new Map<string, RequestListener>()
  private readonly wallStart = performance.now()
  private lastStepEndVirtual = 0
  private wake: (() => void) | null = null
  private stopped = false
  private paused = false
  private readonly lags: number[] = []
  private lagIndex = 0
  private stepsRun = 0
  readonly done: Promise<void>

  constructor(engine: VllmEngine, timeScale: number, hooks: DriverHooks) {
    if (!(timeScale > 0)) throw new Error('time scale must be positive')
    this.engine = engine
    this.timeScale = timeScale
    this.hooks = hooks
    this.done = this.loop()
  }

  /** Modelled milliseconds since the driver started. */
  virtualNow(): number {
    return (performance.now() - this.wallStart) * this.timeScale
  }

  submit(input: Omit<EngineRequestInput, 'arrivalMs'>, listener: RequestListener): number {
    const arrivalMs = this.virtualNow()
    this.engine.add({ ...input, arrivalMs })
    this.listeners.set(input.id, listener)
    this.wake?.()
    return arrivalMs
  }

  abort(id: string): void {
    this.listeners.delete(id)
    this.engine.abort(id)
  }

  /** Stalls the engine (fault injection): requests queue, no steps run, until resumed. */
  setPaused(paused: boolean): void {
    this.paused = paused
    if (!paused) this.wake?.()
  }

  stop(): Promise<void> {
    this.stopped = true
    this.wake?.()
    return this.done
  }

  /** Starts the lag statistics afresh (after a benchmark's warm-up). */
  resetLagStats(): void {
    this.lags.length = 0
    this.lagIndex = 0
    this.stepsRun = 0
  }

  lagStats(): LagStats {
    const sorted = [...this.lags].sort((a, b) => a - b)
    const at = (q: number) =>
      sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
    const sum = sorted.reduce((a, b) => a + b, 0)
    return {
      steps: this.stepsRun,
      maxMs: sorted.at(-1) ?? 0,
      p99Ms: at(0.99),
      meanMs: sorted.length ? sum / sorted.length : 0,
    }
  }

  private async loop(): Promise<void> {
    // While the engine stays busy, steps follow each other in modelled time with no gap,
    // even when this process wakes late; lag then shows as the wall clock running ahead
    // of the modelled one, which the next steps catch up, instead of as idle GPU time.
    let busy = false
    while (!this.stopped) {
      if (this.paused || !this.engine.hasWork()) {
        busy = false
        await new Promise<void>((resolve) => {
          this.wake = resolve
        })
        this.wake = null
        continue
      }
      const start = busy
        ? this.lastStepEndVirtual
        : Math.max(this.virtualNow(), this.lastStepEndVirtual)
      const step = this.engine.step(start)
      if (!step) {
        // Only requests stamped later than `start` wait: sleep until the first arrives.
        busy = false
        const next = this.engine.nextArrivalMs() ?? start
        this.lastStepEndVirtual = Math.max(this.lastStepEndVirtual, next)
        await this.sleepUntil(this.wallStart + next / this.timeScale)
        continue
      }
      const end = start + step.durationMs
      this.lastStepEndVirtual = end
      const target = this.wallStart + end / this.timeScale
      await this.sleepUntil(target)
      this.recordLag(Math.max(0, performance.now() - target))
      this.stepsRun++
      this.deliver(step, end)
      busy = this.engine.hasWork()
    }
  }

  private async sleepUntil(wallMs: number): Promise<void> {
    const wait = wallMs - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  }

  private deliver(step: StepResult, end: number): void {
    if (step.events.length > 0) this.hooks.onEvents(step.events)
    this.hooks.onStep(step, end)
    for (const started of step.started) {
      this.listeners.get(started.requestId)?.onStart(started.numCachedTokens, step.startMs)
    }
    for (const output of step.outputs) {
      const listener = this.listeners.get(output.requestId)
      if (output.finished) this.listeners.delete(output.requestId)
      listener?.onToken(output, end)
    }
  }

  /** A ring of the last 10,000 lags keeps the percentile honest without growing forever. */
  private recordLag(ms: number): void {
    if (this.lags.length < 10_000) this.lags.push(ms)
    else this.lags[this.lagIndex++ % 10_000] = ms
  }
}
