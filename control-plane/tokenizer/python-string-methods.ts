import {
  bool,
  int,
  list,
  pyTypeName,
  pythonWhitespace,
  str,
  type Value,
} from './template-values.ts'

type Method = (self: string, args: Value[]) => Value

const isCased = (char: string) => char.toLowerCase() !== char.toUpperCase()

/** Positional arguments; keyword arguments (the last value, a dict) by name. */
function argument(args: Value[], index: number, name: string): Value | undefined {
  const last = args.at(-1)
  const keywords =
    last?.type === 'KeywordArgumentsValue' ? (last.value as Map<string, Value>) : undefined
  const positional = keywords === undefined ? args : args.slice(0, -1)
  return positional[index] ?? keywords?.get(name)
}

function optionalString(value: Value | undefined, method: string): string | null {
  if (value === undefined || value.type === 'NullValue') return null
  if (value.type !== 'StringValue')
    throw new TypeError(`${method} arg must be None or str, not ${pyTypeName(value)}`)
  return value.value as string
}

function optionalInt(value: Value | undefined, fallback: number): number {
  if (value === undefined || value.type === 'NullValue') return fallback
  if (value.type !== 'IntegerValue' && value.type !== 'BooleanValue')
    throw new TypeError(`'${pyTypeName(value)}' object cannot be interpreted as an integer`)
  return Number(value.value)
}

/** Python's `strip`, `lstrip`, `rstrip`: whitespace by Python's definition, or the given chars. */
export function pythonStrip(text: string, chars: string | null, start: boolean, end: boolean) {
  // Python strips code points; UTF-16 units do as well unless `chars` has a surrogate pair.
  if (chars !== null && /[\ud800-\udfff]/.test(chars)) {
    const units = [...text]
    let from = 0
    let to = units.length
    while (start && from < to && chars.includes(units[from] as string)) from++
    while (end && to > from && chars.includes(units[to - 1] as string)) to--
    return units.slice(from, to).join('')
  }
  const strips =
    chars === null ? (c: string) => pythonWhitespace.has(c) : (c: string) => chars.includes(c)
  let from = 0
  let to = text.length
  while (start && from < to && strips(text[from] as string)) from++
  while (end && to > from && strips(text[to - 1] as string)) to--
  return from === 0 && to === text.length ? text : text.slice(from, to)
}

function splitWhitespace(text: string, maxsplit: number): string[] {
  const out: string[] = []
  const units = [...text]
  let i = 0
  while (i < units.length) {
    while (i < units.length && pythonWhitespace.has(units[i] as string)) i++
    if (i >= units.length) break
    if (maxsplit >= 0 && out.length === maxsplit) {
      out.push(pythonStrip(units.slice(i).join(''), null, false, true))
      break
    }
    let j = i
    while (j < units.length && !pythonWhitespace.has(units[j] as string)) j++
    out.push(units.slice(i, j).join(''))
    i = j
  }
  return out
}

function splitOn(text: string, sep: string, maxsplit: number): string[] {
  if (sep === '') throw new Error('ValueError: empty separator')
  const parts = text.split(sep)
  if (maxsplit < 0 || parts.length <= maxsplit + 1) return parts
  return [...parts.slice(0, maxsplit), parts.slice(maxsplit).join(sep)]
}

function affixes(value: Value | undefined, method: string): string[] {
  if (value?.type === 'StringValue') return [value.value as string]
  if (value?.type === 'TupleValue' || value?.type === 'ArrayValue')
    return (value.value as Value[]).map((item) => {
      if (item.type !== 'StringValue')
        throw new TypeError(`tuple for ${method} must only contain str`)
      return item.value as string
    })
  throw new TypeError(`${method} first arg must be str or a tuple of str`)
}

const strip =
  (start: boolean, end: boolean, name: string): Method =>
  (self, args) =>
    str(pythonStrip(self, optionalString(argument(args, 0, 'chars'), name), start, end))

/**
 * Python's str methods that chat templates call, with Python's results where
 * `@huggingface/jinja` differs (its strip ignores its argument and trims JavaScript's
 * whitespace, its split and title are not Python's). Other methods fall through to it.
 */
export const pythonStringMethods: ReadonlyMap<string, Method> = new Map<string, Method>([
  ['strip', strip(true, true, 'strip')],
  ['lstrip', strip(true, false, 'lstrip')],
  ['rstrip', strip(false, true, 'rstrip')],
  [
    'split',
    (self, args) => {
      const sep = optionalString(argument(args, 0, 'sep'), 'split')
      const maxsplit = optionalInt(argument(args, 1, 'maxsplit'), -1)
      const parts = sep === null ? splitWhitespace(self, maxsplit) : splitOn(self, sep, maxsplit)
      return list(parts.map(str))
    },
  ],
  [
    'startswith',
    (self, args) =>
      bool(affixes(argument(args, 0, 'prefix'), 'startswith').some((p) => self.startsWith(p))),
  ],
  [
    'endswith',
    (self, args) =>
      bool(affixes(argument(args, 0, 'suffix'), 'endswith').some((s) => self.endsWith(s))),
  ],
  ['upper', (self) => str(self.toUpperCase())],
  ['lower', (self) => str(self.toLowerCase())],
  [
    'capitalize',
    (self) => {
      const [first = '', ...rest] = [...self]
      return str(first.toUpperCase() + rest.join('').toLowerCase())
    },
  ],
  [
    'title',
    (self) => {
      let out = ''
      let previousCased = false
      for (const char of self) {
        out += previousCased ? char.toLowerCase() : char.toUpperCase()
        previousCased = isCased(char)
      }
      return str(out)
    },
  ],
  [
    'replace',
    (self, args) => {
      const [old, replacement] = [argument(args, 0, 'old'), argument(args, 1, 'new')]
      if (old?.type !== 'StringValue' || replacement?.type !== 'StringValue')
        throw new TypeError('replace() arguments must be str')
      const count = optionalInt(argument(args, 2, 'count'), -1)
      const parts = (self as string).split(old.value as string)
      if (count < 0 || parts.length <= count + 1)
        return str(parts.join(replacement.value as string))
      return str(
        parts.slice(0, count + 1).join(replacement.value as string) +
          (old.value as string) +
          parts.slice(count + 1).join(old.value as string),
      )
    },
  ],
  [
    'find',
    (self, args) => int(self.indexOf(optionalString(argument(args, 0, 'sub'), 'find') ?? '')),
  ],
  [
    'count',
    (self, args) =>
      int(self.split(optionalString(argument(args, 0, 'sub'), 'count') ?? '').length - 1),
  ],
  [
    'removeprefix',
    (self, args) => {
      const prefix = optionalString(argument(args, 0, 'prefix'), 'removeprefix') ?? ''
      return str(self.startsWith(prefix) ? self.slice(prefix.length) : self)
    },
  ],
  [
    'removesuffix',
    (self, args) => {
      const suffix = optionalString(argument(args, 0, 'suffix'), 'removesuffix') ?? ''
      return str(suffix !== '' && self.endsWith(suffix) ? self.slice(0, -suffix.length) : self)
    },
  ],
  ['isspace', (self) => bool(self !== '' && [...self].every((c) => pythonWhitespace.has(c)))],
  ['isdigit', (self) => bool(/^\p{Nd}+$/u.test(self))],
  ['isalpha', (self) => bool(/^\p{L}+$/u.test(self))],
  ['isalnum', (self) => bool(/^[\p{L}\p{N}]+$/u.test(self))],
  ['islower', (self) => bool([...self].some(isCased) && self === self.toLowerCase())],
  ['isupper', (self) => bool([...self].some(isCased) && self === self.toUpperCase())],
])
