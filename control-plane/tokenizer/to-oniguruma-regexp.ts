/**
 * What `\s` matches in Oniguruma, the regex engine of Hugging Face `tokenizers` (and so
 * of vLLM): U+0009..U+000D, U+0085 and the Zs/Zl/Zp characters. JavaScript's `\s` differs
 * in two places: it leaves out U+0085 (NEL) and adds U+FEFF (BOM). Checked against
 * `tokenizers` 0.23 on every code point.
 */
const onigurumaWhitespace =
  '\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000'

/**
 * The same set is Rust's `char::is_whitespace` (Unicode White_Space), which `tokenizers`
 * uses to strip around added tokens marked lstrip or rstrip.
 */
export const whitespaceCharacter = new RegExp(`^[${onigurumaWhitespace}]$`)

/**
 * Compiles a pre-tokenizer pattern from a `tokenizer.json` (written for Oniguruma) into a
 * global Unicode JavaScript RegExp that splits text the same way.
 *
 * `\s` and `\S` are rewritten to Oniguruma's whitespace set, inside and outside character
 * classes, and a literal "]" is escaped. Everything else is kept: Node 24 understands the `(?i:...)` modifier group and
 * `\p{L}`/`\p{N}`. The only remaining difference is the Unicode version: V8 knows the
 * characters added in Unicode 17 (2025) as letters and numbers, Oniguruma's tables stop
 * at Unicode 16.
 */
export function toOnigurumaRegExp(pattern: string): RegExp {
  let source = ''
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]
    if (char === '\\') {
      const escaped = pattern[++i]
      if (escaped === undefined) throw new SyntaxError(`pattern ends with a backslash: ${pattern}`)
      if (escaped === 's') {
        source += inClass ? onigurumaWhitespace : `[${onigurumaWhitespace}]`
      } else if (escaped === 'S') {
        if (inClass) throw new SyntaxError(`\\S inside a character class is not supported`)
        source += `[^${onigurumaWhitespace}]`
      } else {
        source += `\\${escaped}`
      }
      continue
    }
    if (char === '[' && !inClass) inClass = true
    else if (char === ']' && inClass) inClass = false
    // A "]" outside a class is a literal for Oniguruma, an error in a Unicode-mode RegExp.
    else if (char === ']') source += '\\'
    source += char
  }
  return new RegExp(source, 'gu')
}
