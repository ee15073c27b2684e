import type { IncomingMessage } from 'node:http'
import { samplingError } from './vllm-error.ts'

/** The header vLLM's OpenAI server takes a request's engine from. */
export const dataParallelRankHeader = 'x-data-parallel-rank'

/** What Python's int() accepts of a string: blanks around, a sign, digits joined by single _. */
const pythonInt = /^\s*([+-]?\d+(?:_\d+)*)\s*$/

/**
 * The data-parallel rank a request asks for, or null for the load balancer to choose. As
 * vLLM: `_get_data_parallel_rank` (vllm/entrypoints/openai/engine/serving.py) reads the
 * header's first value with int() and ignores one that is not an integer; then
 * `InputProcessor.process_inputs` (vllm/v1/engine/input_processor.py) refuses a rank
 * outside [0, data-parallel size) with a VLLMValidationError, a 400 naming the range.
 */
export function requestedDataParallelRank(request: IncomingMessage, size: number): number | null {
  const value = request.headersDistinct[dataParallelRankHeader]?.[0]
  const match = value === undefined ? null : pythonInt.exec(value)
  if (!match?.[1]) return null
  const rank = BigInt(match[1].replaceAll('_', ''))
  if (rank < 0n || rank >= BigInt(size))
    throw samplingError(`data_parallel_rank ${rank} is out of range [0, ${size}).`)
  return Number(rank)
}
