import { Environment, Template } from '@huggingface/jinja'
import { describe, expect, it } from 'vitest'
import { createPythonInterpreter } from '../../../control-plane/tokenizer/python-interpreter.ts'
import { pythonStrftime } from '../../../control-plane/tokenizer/python-strftime.ts'
import { toValue } from '../../../control-plane/tokenizer/template-values.ts'

function render(source: string, variables: Record<string, unknown> = {}): string {
  const env = new Environment()
  for (const [name, value] of Object.entries({
    true: true,
    false: false,
    none: null,
    ...variables,
  }))
    env.setVariable(name, toValue(value) as never)
  return String(createPythonInterpreter(env).run(new Template(source).parsed).value)
}

/**
 * [template, variables, what Python's jinja2 3.1.6 renders] in transformers' environment
 * (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, json.dumps as tojson),
 * computed with python3 on Debian; `@huggingface/jinja` alone renders each differently.
 */
const python: [string, Record<string, unknown>, string][] = [
  [
    '{{ true }} {{ none }} {{ 1.5 }} {{ [1, "a", none] }} {{ {"k": true} }} {{ x }}',
    { x: 1e-7 },
    "True None 1.5 [1, 'a', None] {'k': True} 1e-07",
  ],
  [
    "{{ s.strip() }}|{{ s.lstrip('\\n') }}|{{ s.rstrip() }}|{{ s | trim }}",
    { s: '\n \tx\u0085 \n\ufeff' },
    'x\u0085 \n\ufeff| \tx\u0085 \n\ufeff|\n \tx\u0085 \n\ufeff|x\u0085 \n\ufeff',
  ],
  [
    "{{ 'a b  c'.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }}",
    {},
    "['a', 'b', 'c'] ['a', 'b,c'] Hello World Hello",
  ],
  [
    '{{ d | tojson }}|{{ d | tojson(indent=2) }}',
    { d: { b: 1, items: [1.5, 'é'], a: null } },
    '{"b": 1, "items": [1.5, "é"], "a": null}|{\n  "b": 1,\n  "items": [\n    1.5,\n    "é"\n  ],\n  "a": null\n}',
  ],
  [
    '{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}',
    { d: { b: 1, items: 2 } },
    'b=1;items=2;',
  ],
  [
    "{{ 'x' in d }} {{ 1 in l }} {{ 'ab' in 'cab' }} {{ l == [1, 2] }} {{ d == {'x': 1} }}",
    { d: { x: 1 }, l: [1, 2] },
    'True True True True True',
  ],
  [
    '{{ x is string }} {{ d is iterable }} {{ d is mapping }} {{ 1 is number }} {{ true is number }} {{ true is integer }} {{ u is defined }}',
    { x: 'a', d: { a: 1 } },
    'True True True True True False False',
  ],
  [
    "{{ l | join(', ') }} {{ l | length }} {{ 'é😀' | length }}",
    { l: [1, true, 'x', null] },
    '1, True, x, None 4 2',
  ],
  [
    "{{ l | reject('equalto', 'b') | join }} {{ l | select('equalto', 'b') | list }}",
    { l: ['a', 'b', 'c'] },
    "ac ['b']",
  ],
  ["{{ '=' * 3 }} {{ 'b' > 'a' }} {{ x ~ 1.5 ~ none }}", { x: 's' }, '=== True s1.5None'],
  [
    "{{ s.startswith(('a', 'x')) }} {{ s.endswith('z') }} {{ s.replace('a', 'b', 1) }} {{ s | upper }}",
    { s: 'aaz' },
    'True True baz AAZ',
  ],
]

describe('createPythonInterpreter', () => {
  it.each(python)('renders %j as Python’s jinja2 does', (source, variables, expected) => {
    expect(render(source, variables)).toBe(expected)
  })

  it('fails where Python fails: str + int, an attribute of an undefined value', () => {
    expect(() => render("{{ 'a' + 1 }}")).toThrow('can only concatenate str (not "int") to str')
    expect(() => render('{{ u.attr }}')).toThrow(/undefined/)
    expect(() => render('{{ d | tojson }}', { d: { f: undefined } })).toThrow(
      /not JSON serializable/,
    )
  })
})

describe('pythonStrftime', () => {
  it('formats the UTC time with C-locale names, as datetime.strftime does', () => {
    const at = Date.UTC(2025, 7, 5, 13, 4, 9)
    // python3: datetime(2025, 8, 5, 13, 4, 9).strftime(...)
    expect(pythonStrftime(at, '%Y-%m-%d %H:%M:%S')).toBe('2025-08-05 13:04:09')
    expect(pythonStrftime(at, '%d %b %Y, %A %B %j %I%p %y %%')).toBe(
      '05 Aug 2025, Tuesday August 217 01PM 25 %',
    )
    expect(pythonStrftime(at, '%Q %')).toBe('%Q %')
  })
})
