/**
 * The PCIe link between GPU and host memory as the OffloadingConnector uses it: one queue
 * per direction, each transfer starting when the previous one in its direction has ended
 * (`vllm/v1/kv_offload/cpu/gpu_worker.py`, SingleDirectionOffloadingHandler: "transfers
 * are guaranteed to be executed in order of their submission"), and the two directions
 * independent of each other, as PCIe is full duplex.
 */
export class HostLink {
  private readonly bytesPerMs: number
  private readonly freeAt = { load: 0, store: 0 }

  constructor(bytesPerSecond: number) {
    this.bytesPerMs = bytesPerSecond / 1000
  }

  /** Queues `bytes` in `direction` from `startMs` on; returns when they have all arrived. */
  transfer(direction: 'load' | 'store', startMs: number, bytes: number): number {
    const endMs = Math.max(startMs, this.freeAt[direction]) + bytes / this.bytesPerMs
    this.freeAt[direction] = endMs
    return endMs
  }
}
