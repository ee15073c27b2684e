import { readFile, stat } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { z } from 'zod'
import {
  type CompiledCustomPattern,
  CustomPiiPattern,
  compileCustomPatterns,
  maxCustomPatterns,
} from '../../../shared/pii/custom-pii-patterns.ts'
import { detectPii } from '../../../shared/pii/detect-pii.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'
import { maxFileBytes } from '../load-documents.ts'

export const piiUsage = `Usage: kinfctl pii [options] <file|->

Runs the PII detectors on each line of the input (a file, or - for standard input)
and prints one JSON line per input line:
  {"line":1,"labels":["pii","pii:email"],"spans":[{"type":"email","start":8,"end":25,"text":"..."}]}
Offsets are UTF-16 code units within the line, end exclusive.
Exit status: 0 scanned, 1 unreadable input or invalid patterns, 2 usage error.

Options:
      --patterns FILE   custom patterns to scan for as well: a YAML or JSON list of
                        {name, regex, label}, an object with "patterns", or
                        InferencePolicy documents (their spec.pii.patterns)
      --summary         also print, on standard error, how many lines carry each label
`

/** Corpora are bigger than policy files; this still bounds what is held in memory. */
const maxInputBytes = 512 * 1024 * 1024
/** Output is flushed in chunks of about this many characters. */
const flushAt = 64 * 1024

export async function piiCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      patterns: { type: 'string' },
      summary: { type: 'boolean', default: false },
    },
  })
  if (positionals.length !== 1) {
    throw new UsageError(positionals.length === 0 ? 'no input given' : 'give one input file or -')
  }
  const input = positionals[0] as string
  const custom = values.patterns === undefined ? [] : await loadPatterns(values.patterns)
  const text = input === '-' ? await io.readStdin() : await readText(input, maxInputBytes)
  scanLines(text, custom, io, values.summary)
  return exitCode.ok
}

function scanLines(
  text: string,
  custom: readonly CompiledCustomPattern[],
  io: CliIo,
  summary: boolean,
): void {
  const lines = text.split(/\r?\n/)
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop()
  const counts = new Map<string, number>()
  let withPii = 0
  let buffer = ''
  lines.forEach((line, index) => {
    const detection = detectPii(line, { custom })
    const spans = detection.spans.map((span) => ({
      type: span.type,
      start: span.start,
      end: span.end,
      text: line.slice(span.start, span.end),
    }))
    buffer += `${JSON.stringify({ line: index + 1, labels: detection.labels, spans })}\n`
    if (buffer.length >= flushAt) {
      io.stdout(buffer)
      buffer = ''
    }
    if (detection.labels.length > 0) withPii++
    for (const label of detection.labels) counts.set(label, (counts.get(label) ?? 0) + 1)
  })
  if (buffer !== '') io.stdout(buffer)
  if (summary) {
    const perLabel = [...counts.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([label, count]) => `${label} ${count}`)
    io.stderr(
      `${lines.length} lines, ${withPii} with labels${perLabel.length > 0 ? `: ${perLabel.join(', ')}` : ''}\n`,
    )
  }
}

async function readText(file: string, limit: number): Promise<string> {
  let bytes: Uint8Array
  try {
    const info = await stat(file)
    if (info.isDirectory()) throw new Error('is a folder, not a file')
    if (info.size > limit)
      throw new Error(`is ${info.size} bytes, more than the ${limit}-byte limit`)
    bytes = await readFile(file)
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message
    throw new Error(`cannot read ${file}: ${reason}`)
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new Error(`cannot read ${file}: not UTF-8 text`)
  }
}

const PatternList = z.array(CustomPiiPattern).max(maxCustomPatterns)

/**
 * Custom patterns from a list, a {patterns: [...]} object, or InferencePolicy documents,
 * validated by the same schema as the policy field; any problem names the file.
 */
async function loadPatterns(file: string): Promise<CompiledCustomPattern[]> {
  const text = await readText(file, maxFileBytes)
  const found: unknown[] = []
  for (const document of parseAllDocuments(text, { prettyErrors: false })) {
    if (document.errors.length > 0) {
      throw new Error(`${file}: not YAML or JSON: ${document.errors[0]?.message}`)
    }
    const value: unknown = document.toJS({ maxAliasCount: 100 })
    if (Array.isArray(value)) found.push(...value)
    else if (isRecord(value) && value.kind === 'InferencePolicy') {
      const spec = isRecord(value.spec) ? value.spec : {}
      const pii = isRecord(spec.pii) ? spec.pii : {}
      if (Array.isArray(pii.patterns)) found.push(...pii.patterns)
    } else if (isRecord(value) && Array.isArray(value.patterns)) found.push(...value.patterns)
    else if (value !== null && value !== undefined) {
      throw new Error(
        `${file}: expected a list of patterns, an object with "patterns", or InferencePolicy documents`,
      )
    }
  }
  if (found.length === 0) throw new Error(`${file}: no PII patterns found`)
  const parsed = PatternList.safeParse(found)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const path =
      issue?.path
        .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
        .join('') ?? ''
    throw new Error(`${file}: patterns${path}: ${issue?.message}`)
  }
  return compileCustomPatterns(parsed.data)
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
