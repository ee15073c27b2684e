/** Python's `str.isspace()` characters: what `strip()` with no argument removes. */
const pythonWhitespace = new Set(
  '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000',
)

function stripper(fromStart: boolean, fromEnd: boolean) {
  return (value: unknown, chars?: unknown): string => {
    if (typeof value !== 'string') throw new TypeError('strip() needs a string')
    const strips =
      typeof chars === 'string'
        ? (char: string) => chars.includes(char)
        : (char: string) => pythonWhitespace.has(char)
    const units = [...value]
    let start = 0
    let end = units.length
    while (fromStart && start < end && strips(units[start] as string)) start++
    while (fromEnd && end > start && strips(units[end - 1] as string)) end--
    return units.slice(start, end).join('')
  }
}

/** Python's `str.strip()` and `str.rstrip()` with no argument, for code outside templates. */
export const pythonStrip = stripper(true, true)
export const pythonRstrip = stripper(false, true)

/** Template globals that the rewritten calls go to. */
export const pythonStripFunctions = {
  __py_strip: stripper(true, true),
  __py_lstrip: stripper(true, false),
  __py_rstrip: stripper(false, true),
} as const

type Node = { type?: unknown; [key: string]: unknown }

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null
}

/**
 * `@huggingface/jinja` implements `s.strip(chars)`, `lstrip` and `rstrip` with JavaScript's
 * `trim`: it ignores `chars` and trims JavaScript's whitespace. Qwen3's template relies on
 * Python's meaning (`content.lstrip('\n')` keeps a leading space or tab), so this rewrites
 * every `x.strip(args)` call of a parsed template in place into `__py_strip(x, args)`,
 * served by `pythonStripFunctions`. Returns how many calls it rewrote.
 */
export function usePythonStrip(root: unknown): number {
  let rewritten = 0
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item)
      return
    }
    if (!isNode(value)) return
    for (const child of Object.values(value)) visit(child)
    if (value.type !== 'CallExpression') return
    const callee = value.callee
    if (!isNode(callee) || callee.type !== 'MemberExpression' || callee.computed === true) return
    const property = callee.property
    if (!isNode(property) || property.type !== 'Identifier') return
    if (!['strip', 'lstrip', 'rstrip'].includes(property.value as string)) return
    property.value = `__py_${property.value}`
    value.args = [callee.object, ...(value.args as unknown[])]
    value.callee = property
    rewritten++
  }
  visit(root)
  return rewritten
}
