import { readdir, readFile, stat } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { type MooncakeRequest, maxTraceBytes, parseMooncakeTrace } from './parse-mooncake-trace.ts'

/** The traces vendored with the repository (data/traces/NAME.jsonl). */
export const vendoredTraceDir = new URL('../../../../data/traces/', import.meta.url)

const tracePrefix = 'trace:'

/** Whether a --data argument is a trace replay (`trace:FILE` or `trace:NAME`). */
export function isTraceData(data: string): boolean {
  return data.startsWith(tracePrefix)
}

/**
 * The file a `trace:` data argument names: with a path separator, that path (relative to
 * the working directory); without one, the vendored trace NAME (`.jsonl` optional),
 * found next to this module, not in the working directory.
 */
export function tracePathOf(data: string): string {
  const name = data.slice(tracePrefix.length).trim()
  if (name === '') throw new KinfError('invalid_request', 'trace: names no file')
  if (/[/\\]/.test(name)) return name
  const file = name.endsWith('.jsonl') ? name : `${name}.jsonl`
  return fileURLToPath(new URL(file, vendoredTraceDir))
}

/** Reads and parses the Mooncake trace a `trace:` data argument names, up to `maxBytes`. */
export async function loadMooncakeTrace(
  data: string,
  maxBytes = maxTraceBytes,
): Promise<MooncakeRequest[]> {
  const path = tracePathOf(data)
  let size: number
  try {
    size = (await stat(path)).size
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const known = code === 'ENOENT' && !/[/\\]/.test(data) ? await vendoredNames() : null
    throw new KinfError(
      'invalid_request',
      `${path}: cannot read the trace (${code ?? (error as Error).message})${known ? `; vendored traces: ${known}` : ''}`,
    )
  }
  if (size > maxBytes)
    throw new KinfError(
      'invalid_request',
      `${path}: the trace is ${size} bytes, over the limit of ${maxBytes}`,
    )
  return parseMooncakeTrace(await readFile(path, 'utf8'), path)
}

async function vendoredNames(): Promise<string> {
  const files = await readdir(vendoredTraceDir).catch(() => [] as string[])
  const names = files.filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -'.jsonl'.length))
  return names.length > 0 ? names.join(', ') : 'none'
}
