import { RE2JS } from 're2js'
import { z } from 'zod'
import { ResourceName } from '../crd/object-meta.ts'
import { RequestLabel } from '../crd/policy-match.ts'
import { KinfError } from '../errors/kinf-error.ts'
import type { PiiSpan } from './pii-span.ts'

export interface CompiledCustomPattern {
  name: string
  label: string
  regex: RE2JS
  /** Spans reported per text (see maxSpans). */
  maxSpans: number
}

export const maxCustomPatterns = 16
export const maxCustomPatternLength = 512
/** Instructions of the compiled program: the matcher's work per character grows with it. */
export const maxCustomPatternProgram = 1_000
/** Matches reported per pattern and text: the label is decided by the first one anyway. */
const maxSpansBounded = 1_000
/**
 * Each further match of a pattern that can match unboundedly long text may rescan the rest
 * of the text (`.*x|a`), so such a pattern reports only its first few.
 */
const maxSpansUnbounded = 16

/**
 * Why a pattern source cannot be used, or null when it can. It must compile with RE2's
 * syntax (re2js): a linear-time matcher, so no pattern can backtrack on a crafted prompt;
 * what RE2 cannot match in linear time (lookaround, backreferences) does not compile.
 */
export function customPatternProblem(source: string): string | null {
  if (source.length > maxCustomPatternLength) {
    return `must be at most ${maxCustomPatternLength} characters`
  }
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(source)
  } catch (error) {
    return `is not a regular expression the linear-time matcher (RE2 syntax: no lookaround, no backreferences, \\x{...} for code points) can compile: ${(error as Error).message}`
  }
  if (compiled.programSize() > maxCustomPatternProgram) {
    return `compiles to ${compiled.programSize()} instructions, more than ${maxCustomPatternProgram}: use smaller repeat counts or fewer alternatives`
  }
  return null
}

/**
 * A policy's own structured-PII pattern (InferencePolicy spec.pii.patterns[]), scanned
 * beside the built-in detectors.
 */
export const CustomPiiPattern = z.strictObject({
  name: ResourceName.describe('Pattern name, shown in kinfctl pii output and errors.'),
  regex: z
    .string()
    .min(1)
    .max(maxCustomPatternLength)
    .superRefine((source, ctx) => {
      const problem = customPatternProblem(source)
      if (problem !== null) ctx.addIssue({ code: 'custom', message: `regex ${problem}` })
    })
    .describe(
      'RE2 regular expression (github.com/google/re2/wiki/Syntax), matched anywhere in the prompt in linear time (re2js), so no pattern can backtrack on a crafted prompt. Lookaround and backreferences do not exist in it; code points are \\x{1F600}, not \\u; \\d, \\w, \\s and \\b are ASCII; . matches all but newline; (?i) ignores case. At most 512 characters and 1,000 compiled instructions (repeat counts at most 1,000).',
    ),
  label: RequestLabel.describe(
    'Label a match adds, e.g. pii:employee-id; a label in the pii group also adds pii.',
  ),
})
export type CustomPiiPattern = z.infer<typeof CustomPiiPattern>

/** Validates and compiles a policy's patterns; a bad one is a KinfError naming it. */
export function compileCustomPatterns(
  patterns: readonly CustomPiiPattern[],
): CompiledCustomPattern[] {
  if (patterns.length > maxCustomPatterns) {
    throw new KinfError('invalid_config', `at most ${maxCustomPatterns} custom PII patterns`)
  }
  return patterns.map((pattern) => {
    const problem = customPatternProblem(pattern.regex)
    if (problem !== null) {
      throw new KinfError('invalid_config', `PII pattern "${pattern.name}": regex ${problem}`)
    }
    if (!RequestLabel.safeParse(pattern.label).success) {
      throw new KinfError(
        'invalid_config',
        `PII pattern "${pattern.name}": label "${pattern.label}" is not a request label (e.g. pii:employee-id)`,
      )
    }
    return {
      name: pattern.name,
      label: pattern.label,
      regex: RE2JS.compile(pattern.regex),
      maxSpans: matchesUnbounded(pattern.regex) ? maxSpansUnbounded : maxSpansBounded,
    }
  })
}

/** The pattern's non-empty matches, leftmost first as JavaScript finds them, in UTF-16 offsets. */
export function detectCustom(text: string, pattern: CompiledCustomPattern): PiiSpan[] {
  const spans: PiiSpan[] = []
  const matcher = pattern.regex.matcher(text)
  while (spans.length < pattern.maxSpans && matcher.find()) {
    const start = matcher.start()
    const end = matcher.end()
    // An empty match marks nothing; the matcher steps over it by itself.
    if (end > start) spans.push({ type: pattern.label, start, end })
  }
  return spans
}

/**
 * Whether a pattern may match text of any length: an unescaped `*`, `+` or `{n,}` outside
 * a character class. Errs towards yes (a `*` inside \Q...\E counts), which only lowers the
 * number of spans reported.
 */
function matchesUnbounded(source: string): boolean {
  let i = 0
  while (i < source.length) {
    const c = source.charAt(i)
    if (c === '\\') i += 2
    else if (c === '[') i = skipClass(source, i)
    else if (c === '*' || c === '+' || /^\{\d+,\}/.test(source.slice(i, i + 12))) return true
    else i++
  }
  return false
}

function skipClass(source: string, from: number): number {
  // "[]a]" and "[^]a]": a "]" first in the class is a literal.
  let i = from + 1
  if (source.charAt(i) === '^') i++
  if (source.charAt(i) === ']') i++
  while (i < source.length && source.charAt(i) !== ']') i += source.charAt(i) === '\\' ? 2 : 1
  return i + 1
}
