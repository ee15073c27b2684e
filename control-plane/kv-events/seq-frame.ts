/**
 * The sequence-number frame of vLLM's KV events: 8 bytes, big-endian, unsigned. Live
 * messages and replay replies carry one; a replay request is one.
 */
export function seqFrame(seq: bigint): Uint8Array {
  const frame = new Uint8Array(8)
  new DataView(frame.buffer).setBigUint64(0, BigInt.asUintN(64, seq))
  return frame
}

/** The seq in a frame, or undefined when the frame is not exactly 8 bytes. */
export function readSeqFrame(frame: Uint8Array): bigint | undefined {
  if (frame.length !== 8) return undefined
  return new DataView(frame.buffer, frame.byteOffset, 8).getBigUint64(0)
}

/** Ends a replay: `(-1).to_bytes(8, "big", signed=True)`, followed by an empty payload. */
export const replayEndSeq = 0xffff_ffff_ffff_ffffn
