/** One PromQL token; Grafana's `$var`, `${var}` and `[[var]]` are tokens of their own. */
interface Token {
  kind: 'identifier' | 'string' | 'number' | 'variable' | 'punct'
  text: string
}

const tokenPatterns: [Token['kind'] | 'space', RegExp][] = [
  ['space', /^(?:\s+|#[^\n]*)/],
  ['string', /^(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)/],
  ['variable', /^(?:\$\{[^}]+\}|\$\w+|\[\[\w+\]\])/],
  // Numbers and durations alike (1, 0.5, 1e3, 0x1f, 5m, 1h30m): never metric names.
  ['number', /^(?:0[xX][0-9a-fA-F]+|\.?\d[\w.]*(?:[eE][+-]?\d+)?)/],
  ['identifier', /^[a-zA-Z_:][a-zA-Z0-9_:]*/],
  ['punct', /^(?:=~|!~|==|!=|<=|>=|[-+*/%^<>=(){}[\],@])/],
]

/** PromQL text as tokens; throws on a character no PromQL token starts with. */
export function tokenizePromql(query: string): Token[] {
  const tokens: Token[] = []
  let rest = query
  while (rest.length > 0) {
    const match = tokenPatterns
      .map(([kind, pattern]) => ({ kind, text: pattern.exec(rest)?.[0] }))
      .find((candidate) => candidate.text)
    if (!match?.text) {
      throw new Error(`PromQL: unexpected ${JSON.stringify(rest.slice(0, 20))} in ${query}`)
    }
    if (match.kind !== 'space') tokens.push({ kind: match.kind, text: match.text })
    rest = rest.slice(match.text.length)
  }
  return tokens
}

/** Followed by a parenthesised list of label names, or (group_*) by nothing. */
const labelListKeywords = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right'])
const keywords = new Set(['bool', 'offset', 'and', 'or', 'unless', 'atan2', 'inf', 'nan'])
const aggregations = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
])

/** What a PromQL expression names: metrics, and labels (matched, or grouped by). */
export interface PromqlNames {
  metrics: string[]
  labels: string[]
}

/**
 * The metric names a PromQL expression selects, in order of first mention: bare names of
 * vector selectors and `{__name__="…"}` matchers. Label names (in matchers and in
 * `by`/`without`/`on`/`ignoring`/`group_*` lists), functions, aggregations, keywords,
 * strings, numbers, durations and Grafana variables are not names. A `__name__` matched by
 * regex cannot be checked and throws.
 */
export function promqlMetricNames(query: string): string[] {
  return readPromqlNames(query).metrics
}

/** The metrics as promqlMetricNames reads them, and the label names of matchers and lists. */
export function readPromqlNames(query: string): PromqlNames {
  const tokens = tokenizePromql(query)
  const metrics: string[] = []
  const labels: string[] = []
  const add = (list: string[], name: string) => {
    if (!list.includes(name)) list.push(name)
  }
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token
    const next = tokens[i + 1]
    if (token.text === '{') {
      const end = closing(tokens, i, '{', '}')
      readMatchers(
        tokens.slice(i + 1, end),
        (name) => add(metrics, name),
        (name) => add(labels, name),
      )
      i = end
    } else if (token.text === '[') {
      i = closing(tokens, i, '[', ']') // a range or subquery's durations
    } else if (token.kind === 'identifier') {
      const word = token.text.toLowerCase()
      if (labelListKeywords.has(word)) {
        if (next?.text !== '(') continue
        const end = closing(tokens, i + 1, '(', ')')
        for (const label of tokens.slice(i + 2, end))
          if (label.kind === 'identifier') add(labels, label.text)
        i = end
      } else if (keywords.has(word)) {
        // an operator or modifier
      } else if (next?.text === '(') {
        // a function or aggregation called
      } else if (aggregations.has(word) && (next?.text === 'by' || next?.text === 'without')) {
        // `sum by (…) (…)`: the aggregation, then its label list
      } else add(metrics, token.text)
    }
  }
  return { metrics, labels }
}

const matchOps = new Set(['=', '!=', '=~', '!~'])

/** A `{…}` list's matchers: `__name__="…"` gives a metric, any other a label. */
function readMatchers(
  tokens: Token[],
  metric: (name: string) => void,
  label: (name: string) => void,
): void {
  for (let i = 0; i < tokens.length; i++) {
    const name = tokens[i]
    const op = tokens[i + 1]?.text ?? ''
    if (name?.kind !== 'identifier' || !matchOps.has(op)) continue
    const value = tokens[i + 2]
    if (name.text !== '__name__') label(name.text)
    else if (op === '=' && value?.kind === 'string') metric(unquote(value.text))
    else throw new Error(`PromQL: __name__ ${op} cannot be checked against the exposed names`)
  }
}

/** A PromQL string's value: backquoted ones are raw, quoted ones take Go's escapes. */
function unquote(text: string): string {
  const body = text.slice(1, -1)
  if (text.startsWith('`')) return body
  return JSON.parse(
    `"${text.startsWith("'") ? body.replaceAll("\\'", "'").replaceAll('"', '\\"') : body}"`,
  )
}

/** Index of the bracket closing the one at `start`; throws when it is never closed. */
function closing(tokens: Token[], start: number, open: string, close: string): number {
  let depth = 0
  for (let i = start; i < tokens.length; i++) {
    const text = tokens[i]?.text
    if (tokens[i]?.kind !== 'punct') continue
    if (text === open) depth++
    else if (text === close && --depth === 0) return i
  }
  throw new Error(`PromQL: unclosed ${open}`)
}
