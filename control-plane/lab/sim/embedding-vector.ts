import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'

/**
 * A simulated pooling model's embedding of a prompt: the mean of one fixed pseudo-random
 * vector per distinct token (weighted by its count), unit-normalized as vLLM normalizes
 * embed outputs by default, in float32 as the model returns them. The vectors depend
 * only on the tokens and the model name (the "weights"), so every replica of a model
 * answers the same input with the same vector, and inputs that share tokens are closer.
 */
export function embeddingOf(
  tokenIds: readonly number[],
  modelName: string,
  size: number,
): Float32Array {
  const counts = new Map<number, number>()
  for (const id of tokenIds) counts.set(id, (counts.get(id) ?? 0) + 1)
  const modelSeed = fnv1a(modelName)
  const sum = new Float64Array(size)
  for (const [id, count] of counts) {
    const random = createSeededRandom((modelSeed ^ Math.imul(id + 1, 0x9e3779b9)) >>> 0)
    for (let i = 0; i < size; i++) sum[i] = (sum[i] as number) + count * (2 * random() - 1)
  }
  let norm = 0
  for (const value of sum) norm += value * value
  norm = Math.sqrt(norm)
  // vLLM's F.normalize divides by max(norm, eps), so an all-zero vector stays zero.
  const scale = 1 / Math.max(norm, 1e-12)
  return Float32Array.from(sum, (value) => value * scale)
}

/**
 * vLLM's base64 encoding of an embedding: the float32 tensor's bytes, base64 (embed_dtype
 * float32; endianness `native`, little-endian on the hosts vLLM runs on, or as asked).
 */
export function embeddingBase64(vector: Float32Array, endianness: 'little' | 'big'): string {
  const view = new DataView(new ArrayBuffer(vector.length * 4))
  for (const [i, value] of vector.entries()) view.setFloat32(i * 4, value, endianness === 'little')
  return Buffer.from(view.buffer).toString('base64')
}

/** FNV-1a of a string's UTF-16 code units: a model name's seed. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}
