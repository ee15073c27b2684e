/**
 * A command's options and arguments as its usage text states them: the one description
 * kinfctl has of them, so completion read from it lists what --help lists.
 */
export interface CommandSpec {
  name: string
  summary: string
  options: OptionSpec[]
  /** The words its first argument can be (inspect's views, key's mint); null when free. */
  choices: string[] | null
  /** Whether it takes files as arguments (validate, compile, pii). */
  files: boolean
}

export interface OptionSpec {
  /** Without the dashes. */
  long: string
  short: string | null
  /** What follows it: nothing (a flag), one of `choices`, a file, or anything. */
  value: 'none' | 'choices' | 'file' | 'any'
  choices: string[]
  /** Its description's first line; '' when the usage gives none. */
  description: string
}

/** `  -o, --output text|json   output format`: an option line, its argument and description. */
const optionLine = /^ {2,}(?:-([A-Za-z]), +)?--([a-z][a-z0-9-]*)(?:[ =]([^\s]+))?(?: {2,}(\S.*))?$/
/** `[--pool P]`, `--model M`: an option in a synopsis, its argument if it has one. */
const inlineOption = /--([a-z][a-z0-9-]*)(?: ([A-Za-z0-9_:=.,|-]+))?/g
/** Placeholders of file arguments: FILE, FILE|-, DIR, F (inspect's --prompt-file F). */
const filePlaceholder = /^(?:[A-Z_]*FILE|DIR|F|PATH)(?:\|-)?$/
const choiceList = /^[a-z0-9][a-z0-9-]*(?:\|[a-z0-9][a-z0-9-]*)*$/
const fileWords = new Set(['file', 'folder', 'dir', '-'])

export function commandSpec(name: string, summary: string, usage: string): CommandSpec {
  const lines = usage.split('\n')
  const synopsis = synopsisOf(lines, name)
  const positional = positionalsOf(synopsis[0] ?? '', name)
  const options = new Map<string, OptionSpec>()
  for (const line of lines) {
    const match = optionLine.exec(line)
    if (!match) continue
    const [, short, long = '', arg, description] = match
    merge(options, long, short ?? null, kindOf(arg, true), description ?? '')
  }
  // Synopsis lines name options the option lines may not (inspect's per-view ones).
  const heads = new Set(positional.choices ?? [])
  for (const line of lines) {
    const trimmed = line.trim()
    const inSynopsis = synopsis.includes(line) || heads.has(trimmed.split(/\s/)[0] ?? '')
    if (!inSynopsis) continue
    for (const [, long = '', arg] of trimmed.matchAll(inlineOption))
      merge(options, long, null, kindOf(arg, false), '')
  }
  return { name, summary, options: [...options.values()], ...positional }
}

/** The Usage line and the lines that continue it (indented, up to the first blank line). */
function synopsisOf(lines: readonly string[], name: string): string[] {
  const start = lines.findIndex((line) => line.startsWith(`Usage: kinfctl ${name}`))
  if (start < 0) return []
  const end = lines.findIndex((line, i) => i > start && line.trim() === '')
  return lines.slice(start, end < 0 ? undefined : end)
}

/** From `Usage: kinfctl inspect <pods|prefix> [options]`: what its first argument can be. */
function positionalsOf(line: string, name: string): Pick<CommandSpec, 'choices' | 'files'> {
  const words = line
    .slice(`Usage: kinfctl ${name}`.length)
    .replace(/\[[^\]]*\]|\([^)]*\)/g, ' ')
    .split(/\s+/)
    .filter((word) => word !== '')
  for (const word of words) {
    if (word.startsWith('-')) break
    const list = /^<([^>]+)>(?:\.\.\.)?$/.exec(word)?.[1] ?? (/^[a-z]+$/.test(word) ? word : null)
    if (list === null) break
    const alternatives = list.split('|')
    if (alternatives.some((alternative) => fileWords.has(alternative)))
      return { choices: null, files: true }
    return { choices: alternatives, files: false }
  }
  return { choices: null, files: false }
}

type Kind = Pick<OptionSpec, 'value' | 'choices'>

/** An option's argument: choices only where an option line lists them, e.g. `text|json`. */
function kindOf(arg: string | undefined, optionLine: boolean): Kind {
  if (arg === undefined) return { value: 'none', choices: [] }
  if (filePlaceholder.test(arg)) return { value: 'file', choices: [] }
  if (optionLine && choiceList.test(arg)) return { value: 'choices', choices: arg.split('|') }
  return { value: 'any', choices: [] }
}

const rank: Record<OptionSpec['value'], number> = { none: 0, any: 1, file: 2, choices: 3 }

/** One option named on several lines (bench's --suite, one line per suite): the union. */
function merge(
  options: Map<string, OptionSpec>,
  long: string,
  short: string | null,
  kind: Kind,
  description: string,
): void {
  const known = options.get(long)
  if (!known) {
    options.set(long, { long, short, ...kind, description })
    return
  }
  if (rank[kind.value] > rank[known.value]) known.value = kind.value
  known.choices = [...new Set([...known.choices, ...kind.choices])]
  known.short ??= short
  if (known.description === '') known.description = description
}
