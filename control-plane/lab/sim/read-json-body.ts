import type { IncomingMessage } from 'node:http'
import { unparsableBody, VllmError, validationError } from './vllm-error.ts'

/** Largest request body read; a vLLM pod behind uvicorn has no limit, a test pod needs one. */
const maxBodyBytes = 32 * 1024 * 1024

/**
 * How deeply vLLM's JSON parser can nest: FastAPI parses the body with Python's json, whose
 * C scanner gives up with RecursionError at CPython's C recursion limit. Measured with a
 * bare json.loads: 1,497 levels on 3.12 (the Python of vLLM's images), 999 on 3.11, about
 * 10,000 on 3.13; uvicorn's frames leave a little less (docs/vllm-wire.md §4.1).
 */
export const pythonJsonDepth = 1_490

/** Where a parsed body keeps its text (not enumerable: schemas and copies leave it out). */
const bodyText = Symbol('json body text')

/**
 * The text a body was parsed from, when readJsonBody read it: the renderer reads it again
 * as Python reads it where the difference shows (a tool schema's `50.0` renders as Python
 * prints a float, where JavaScript's JSON has lost it).
 */
export function jsonTextOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null
  const text = (body as { [bodyText]?: unknown })[bodyText]
  return typeof text === 'string' ? text : null
}

/**
 * A request body as vLLM's FastAPI reads it: undefined when empty; JSON that does not parse
 * is a validation error ("JSON decode error"), JSON nested past what Python's parser takes
 * is FastAPI's "There was an error parsing the body". Both are 400s with type "Bad Request".
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > maxBodyBytes)
      throw new VllmError(413, `Request body larger than ${maxBodyBytes} bytes.`)
    chunks.push(chunk as Buffer)
  }
  if (size === 0) return undefined
  const text = Buffer.concat(chunks).toString('utf8')
  if (nestingDepth(text) > pythonJsonDepth) throw unparsableBody()
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw validationError(
      [{ type: 'json_invalid', loc: [], msg: `JSON decode error: ${(error as Error).message}` }],
      'body',
    )
  }
  if (typeof value === 'object' && value !== null)
    Object.defineProperty(value, bodyText, { value: text, enumerable: false })
  return value
}

/** The deepest nesting of objects and arrays in a JSON text (brackets in strings skipped). */
function nestingDepth(text: string): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth)
    else if (c === 0x7d || c === 0x5d) depth--
  }
  return deepest
}
