import { z } from 'zod'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'

/** Tokens per hash id in the Mooncake trace format. */
export const mooncakeBlockTokens = 512

/**
 * One request of a Mooncake trace (kvcache-ai/Mooncake's FAST'25 release; see
 * data/traces/README.md): when it arrived, its lengths, and the ids of its 512-token
 * blocks (equal ids, equal blocks, counted from the start of the prompt). Other fields
 * are ignored.
 */
export const MooncakeRequest = z.object({
  timestamp: z.number().min(0).describe('ms since the trace began'),
  input_length: z.int().min(1).max(10_000_000),
  output_length: z.int().min(1).max(10_000_000),
  hash_ids: z
    .array(
      z
        .int()
        .min(0)
        .max(2 ** 31 - 1),
    )
    .max(100_000),
})
export type MooncakeRequest = z.infer<typeof MooncakeRequest>

/** The largest trace read (the vendored one is about 1.1 MB). */
export const maxTraceBytes = 256 * 1024 * 1024

/**
 * A Mooncake trace's JSONL text, one request a line (blank lines skipped). Any bad line
 * is a KinfError naming `file:line: field: message`: not JSON, a field missing or out of
 * range, a hash id that is not an integer, a timestamp before the previous line's; so is
 * a trace with no requests.
 */
export function parseMooncakeTrace(text: string, file: string): MooncakeRequest[] {
  const requests: MooncakeRequest[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim()
    if (line === '') continue
    const where = `${file}:${i + 1}`
    const request = parseLine(line, where)
    const previous = requests.at(-1)
    if (previous !== undefined && request.timestamp < previous.timestamp)
      throw new KinfError(
        'invalid_request',
        `${where}: timestamp: ${request.timestamp} is before the previous request's ${previous.timestamp}`,
      )
    requests.push(request)
  }
  if (requests.length === 0)
    throw new KinfError('invalid_request', `${file}: the trace has no requests`)
  return requests
}

function parseLine(line: string, where: string): MooncakeRequest {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    throw new KinfError('invalid_request', `${where}: not JSON (${(error as Error).message})`)
  }
  const parsed = MooncakeRequest.safeParse(value)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0] as z.core.$ZodIssue
  throw new KinfError('invalid_request', `${where}: ${fieldOf(issue.path)}: ${issue.message}`)
}

/** ['hash_ids', 3] → hash_ids[3]; [] → the line. */
function fieldOf(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'line'
  return path
    .map((part, i) =>
      typeof part === 'number' ? `[${part}]` : `${i > 0 ? '.' : ''}${String(part)}`,
    )
    .join('')
}
