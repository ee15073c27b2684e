import { readdir, readFile, stat } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { type Document, LineCounter, parseAllDocuments } from 'yaml'

/** Largest input file read; policy folders are small, and this bounds hostile input. */
export const maxFileBytes = 8 * 1024 * 1024
/** Deepest nesting accepted; the deepest Kinference schema is about 10 levels. */
export const maxDepth = 64
const maxAliasCount = 1_000

export interface SourcePosition {
  line: number
  column: number
}

/** One YAML document of an input file, parsed, with what is needed to point into it. */
export interface LoadedDocument {
  file: string
  /** 0-based position of the document in its file. */
  index: number
  start: SourcePosition
  value: unknown
  document: Document.Parsed
  lineCounter: LineCounter
}

/** A file, or a document in it, that could not be read or parsed. */
export interface LoadError {
  file: string
  start: SourcePosition
  message: string
}

export interface LoadResult {
  files: string[]
  documents: LoadedDocument[]
  errors: LoadError[]
}

const yamlExtensions = new Set(['.yaml', '.yml', '.json'])

/**
 * Reads files and folders (recursively, *.yaml, *.yml and *.json, in name order) into
 * documents. Nothing here throws on bad input: every problem becomes a LoadError.
 */
export async function loadDocuments(
  inputs: readonly string[],
  readStdin: () => Promise<string>,
): Promise<LoadResult> {
  const result: LoadResult = { files: [], documents: [], errors: [] }
  for (const input of inputs) {
    if (input === '-') {
      result.files.push('<stdin>')
      parseFile('<stdin>', await readStdin(), result)
      continue
    }
    for (const file of await expand(input, result)) {
      result.files.push(file)
      const text = await readText(file, result)
      if (text !== undefined) parseFile(file, text, result)
    }
  }
  return result
}

async function expand(path: string, result: LoadResult): Promise<string[]> {
  try {
    const info = await stat(path)
    if (!info.isDirectory()) return [path]
    const entries = await readdir(path, { withFileTypes: true })
    const nested = await Promise.all(
      entries
        .filter((entry) => !entry.name.startsWith('.'))
        .sort((a, b) => a.name.localeCompare(b.name))
        .filter((entry) => entry.isDirectory() || yamlExtensions.has(extname(entry.name)))
        .map((entry) => expand(join(path, entry.name), result)),
    )
    return nested.flat()
  } catch (error) {
    result.errors.push({
      file: path,
      start: { line: 0, column: 0 },
      message: `cannot read: ${describe(error)}`,
    })
    return []
  }
}

async function readText(file: string, result: LoadResult): Promise<string | undefined> {
  try {
    const info = await stat(file)
    if (info.size > maxFileBytes) {
      result.errors.push({
        file,
        start: { line: 0, column: 0 },
        message: `file is ${info.size} bytes, more than the ${maxFileBytes}-byte limit`,
      })
      return undefined
    }
    const bytes = await readFile(file)
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch (error) {
    result.errors.push({
      file,
      start: { line: 0, column: 0 },
      message: `cannot read: ${describe(error)}`,
    })
    return undefined
  }
}

function parseFile(file: string, text: string, result: LoadResult): void {
  if (text.length > maxFileBytes) {
    result.errors.push({
      file,
      start: { line: 0, column: 0 },
      message: `input is more than ${maxFileBytes} bytes`,
    })
    return
  }
  const lineCounter = new LineCounter()
  const parsed = parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: false })
  const documents = Array.isArray(parsed) ? parsed : [parsed]
  documents.forEach((document, index) => {
    const start = position(lineCounter, document.range[0])
    if (document.errors.length > 0) {
      for (const error of document.errors) {
        result.errors.push({
          file,
          start: position(lineCounter, error.pos[0]),
          message: `YAML: ${firstLine(error.message)}`,
        })
      }
      return
    }
    let value: unknown
    try {
      value = document.toJS({ maxAliasCount })
    } catch (error) {
      result.errors.push({ file, start, message: `YAML: ${describe(error)}` })
      return
    }
    if (value === null || value === undefined) return
    if (depthOf(value) > maxDepth) {
      result.errors.push({
        file,
        start,
        message: `document is nested more than ${maxDepth} levels deep`,
      })
      return
    }
    result.documents.push({ file, index, start, value, document, lineCounter })
  })
}

/** Nesting depth, computed without recursion so hostile input cannot overflow the stack. */
function depthOf(root: unknown): number {
  let deepest = 0
  const stack: [unknown, number][] = [[root, 1]]
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number]
    if (typeof value !== 'object' || value === null) continue
    deepest = Math.max(deepest, depth)
    if (deepest > maxDepth) return deepest
    for (const child of Object.values(value)) stack.push([child, depth + 1])
  }
  return deepest
}

export function position(lineCounter: LineCounter, offset: number): SourcePosition {
  const { line, col } = lineCounter.linePos(offset)
  return { line, column: col }
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code
    return code ? `${code}: ${error.message.replace(/^\w+: /, '')}` : error.message
  }
  return String(error)
}
