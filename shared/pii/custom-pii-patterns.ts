import { RequestLabel } from '../crd/policy-match.ts'
import { KinfError } from '../errors/kinf-error.ts'
import type { PiiSpan } from './pii-span.ts'

/** A policy's own pattern (InferencePolicy spec.pii.patterns[]). */
export interface CustomPiiPattern {
  name: string
  /** JavaScript regular expression source, compiled with the `u` flag. */
  regex: string
  /** The label a match adds, e.g. `pii:employee-id`. */
  label: string
}

export interface CompiledCustomPattern {
  name: string
  label: string
  regex: RegExp
}

export const maxCustomPatterns = 16
export const maxCustomPatternLength = 512
/** Matches reported per pattern and text: the label is decided by the first one anyway. */
const maxMatchesPerPattern = 1_000

/**
 * Why a pattern source cannot be used, or null when it can. It must compile with the `u`
 * flag, and it must not nest quantifiers ("(a+)+", "(\d*x?)*"): those are the patterns
 * whose backtracking explodes on a crafted prompt, and JavaScript has no match timeout.
 */
export function customPatternProblem(source: string): string | null {
  if (source.length > maxCustomPatternLength) {
    return `must be at most ${maxCustomPatternLength} characters`
  }
  try {
    new RegExp(source, 'u')
  } catch (error) {
    return `is not a valid JavaScript regular expression with the u flag: ${(error as Error).message}`
  }
  if (hasNestedQuantifier(source)) {
    return 'must not repeat a group that itself contains a repetition (e.g. (a+)+): such patterns can backtrack for hours on a hostile prompt'
  }
  return null
}

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
    return { name: pattern.name, label: pattern.label, regex: new RegExp(pattern.regex, 'gu') }
  })
}

export function detectCustom(text: string, pattern: CompiledCustomPattern): PiiSpan[] {
  const spans: PiiSpan[] = []
  const { regex } = pattern
  regex.lastIndex = 0
  for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
    if (match[0].length === 0) {
      // An empty match marks nothing; step over it (by code point, as the u flag does).
      regex.lastIndex = match.index + ((text.codePointAt(match.index) ?? 0) > 0xffff ? 2 : 1)
      continue
    }
    spans.push({ type: pattern.label, start: match.index, end: match.index + match[0].length })
    if (spans.length >= maxMatchesPerPattern) break
  }
  return spans
}

/**
 * A repeated group ("(...)*", "+", "{2,}") containing a quantifier of variable length
 * ("*", "+", "?", "{1,3}"): the shape whose backtracking explodes. "(\d{3}-)?" and
 * "(\d{4} ){3}" are fine. Escapes and character classes are skipped; "?" right after "("
 * is group syntax, not a quantifier.
 */
function hasNestedQuantifier(source: string): boolean {
  // One entry per open group: whether a variable quantifier occurs inside it.
  const stack: boolean[] = []
  let i = 0
  while (i < source.length) {
    const c = source.charAt(i)
    if (c === '\\') {
      i += 2
    } else if (c === '[') {
      i = skipClass(source, i)
    } else if (c === '(') {
      stack.push(false)
      i += source.charAt(i + 1) === '?' ? 2 : 1
    } else if (c === ')') {
      const inner = stack.pop() ?? false
      i++
      const quantifier = quantifierAt(source, i)
      if (quantifier !== null) {
        if (inner && quantifier.repeats) return true
        i += quantifier.length
      }
      if (inner || quantifier?.variable) markVariable(stack)
    } else {
      const quantifier = quantifierAt(source, i)
      if (quantifier === null) i++
      else {
        if (quantifier.variable) markVariable(stack)
        i += quantifier.length
      }
    }
  }
  return false
}

function markVariable(stack: boolean[]): void {
  for (let j = 0; j < stack.length; j++) stack[j] = true
}

interface Quantifier {
  /** Characters it takes, a lazy "?" included. */
  length: number
  /** Matches a varying number of times. */
  variable: boolean
  /** May match more than once. */
  repeats: boolean
}

function quantifierAt(source: string, i: number): Quantifier | null {
  const c = source.charAt(i)
  let quantifier: Quantifier | null = null
  if (c === '*' || c === '+') quantifier = { length: 1, variable: true, repeats: true }
  else if (c === '?') quantifier = { length: 1, variable: true, repeats: false }
  else if (c === '{') {
    const braces = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i, i + 24))
    if (braces !== null) {
      const min = Number(braces[1])
      const max = braces[2] === undefined ? min : braces[3] === '' ? Infinity : Number(braces[3])
      quantifier = { length: braces[0].length, variable: min !== max, repeats: max > 1 }
    }
  }
  if (quantifier !== null && source.charAt(i + quantifier.length) === '?') quantifier.length++
  return quantifier
}

function skipClass(source: string, from: number): number {
  let i = from + 1
  while (i < source.length && source.charAt(i) !== ']') i += source.charAt(i) === '\\' ? 2 : 1
  return i + 1
}
