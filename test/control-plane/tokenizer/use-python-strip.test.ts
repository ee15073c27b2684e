import { Template } from '@huggingface/jinja'
import { describe, expect, it } from 'vitest'
import {
  pythonStripFunctions,
  usePythonStrip,
} from '../../../control-plane/tokenizer/use-python-strip.ts'

function render(source: string, variables: Record<string, unknown>): string {
  const template = new Template(source)
  usePythonStrip(template.parsed)
  return template.render({ ...variables, ...pythonStripFunctions })
}

describe('usePythonStrip', () => {
  it('gives strip, lstrip and rstrip their Python meaning', () => {
    const s = '\n \tx\u0085 \n\ufeff'
    // Expected values from CPython: str.strip(chars) removes only those characters, and
    // str.strip() removes Python whitespace (U+0085 is, U+FEFF is not).
    expect(render("{{ s.lstrip('\\n') }}|{{ s.rstrip('\\n') }}|{{ s.strip('\\n') }}", { s })).toBe(
      ' \tx\u0085 \n\ufeff|\n \tx\u0085 \n\ufeff| \tx\u0085 \n\ufeff',
    )
    expect(render('{{ s.strip() }}|{{ s.rstrip() }}', { s: ' \u0085y\u0085 \x1c' })).toBe(
      'y| \u0085y',
    )
    expect(render("{{ s.split('</think>')[-1].lstrip('\\n') }}", { s: 'a</think>\n\n b' })).toBe(
      ' b',
    )
  })

  it('counts what it rewrote and leaves other calls alone', () => {
    const template = new Template("{{ a.strip() }}{{ a.upper() }}{{ a.rstrip('x') }}")
    expect(usePythonStrip(template.parsed)).toBe(2)
    expect(template.render({ a: 'xAx', ...pythonStripFunctions })).toBe('xAxXAXxA')
  })
})
