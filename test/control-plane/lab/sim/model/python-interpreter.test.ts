import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  compileChatTemplate,
  renderChatTemplate,
} from '../../../../../control-plane/lab/sim/model/chat-template.ts'
import {
  type PyDict,
  parsePythonJson,
} from '../../../../../control-plane/lab/sim/model/python-json.ts'

const fixtures = fileURLToPath(new URL('../../../tokenizer/fixtures/', import.meta.url))

/**
 * Each template rendered by Python's jinja2 in transformers' chat environment (the
 * goldens' reference, render_like_vllm.compile_template): its text, or the exception's
 * type and message.
 */
function pythonRenders(cases: { template: string; variables: string }[]): string[] {
  const script = `
import json, sys
sys.path.insert(0, ${JSON.stringify(fixtures)})
from render_like_vllm import compile_template
for case in json.load(sys.stdin):
    try:
        _, template = compile_template(case['template'])
        print(json.dumps({'text': template.render(**json.loads(case['variables']))}))
    except Exception as error:
        print(json.dumps({'error': type(error).__name__ + ': ' + str(error)}))
`
  const out = spawnSync('python3', ['-c', script], {
    input: JSON.stringify(cases),
    encoding: 'utf8',
  })
  if (out.status !== 0) throw new Error(out.stderr)
  return out.stdout.trim().split('\n')
}

function jsRender(template: string, variables: string): string {
  try {
    const vars = parsePythonJson(variables) as PyDict
    const text = renderChatTemplate(compileChatTemplate(template), {
      messages: [],
      tools: null,
      documents: null,
      addGenerationPrompt: false,
      continueFinalMessage: false,
      variables: vars,
      now: () => new Date('2025-08-05T12:00:00Z'),
    })
    return JSON.stringify({ text })
  } catch (error) {
    const e = error as Error & { pythonType?: string }
    return JSON.stringify({ error: `${e.pythonType}: ${e.message}` })
  }
}

// What templates print and how they fail, where JavaScript and Python differ.
const cases = [
  [
    '{{ x }}|{{ y }}|{{ z }}|{{ n }}|{{ f }}|{{ big }}',
    '{"x": true, "y": null, "z": [1, "a", {"k": 2.0}], "n": 1, "f": 50.0, "big": 12345678901234567890}',
  ],
  [
    '{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k, v in d | items %}{{ k }}{% endfor %}',
    '{"d": {"a": 1, "b": [2]}}',
  ],
  [
    '{{ d }}|{{ d.items() | list }}|{{ d["items"] }}',
    '{"d": {"items": "own key", "b": [true, null]}}',
  ],
  [
    '{{ s.strip("\\n") }}|{{ s.lstrip() }}|{{ s.rstrip("x\\n") }}|{{ s | trim }}',
    '{"s": "\\n\\u3000 hi x\\n"}',
  ],
  ['{{ t.split() }}|{{ t.split(",", 1) }}|{{ t.capitalize() }}', '{"t": "a,B c,D"}'],
  [
    '{{ v | tojson }}|{{ v | tojson(indent=2) }}|{{ v | tojson(separators=(",", ":")) }}|{{ v | tojson(sort_keys=true) }}',
    '{"v": {"z": 1.0, "a": [1e-05, -0.0, 1e20, "é\\u0001"], "m": null}}',
  ],
  ['{{ v | tojson(ensure_ascii=true) }}', '{"v": "é😀"}'],
  [
    '{{ xs | select("odd") | list }}|{{ xs | reject("equalto", 2) | list }}|{{ xs | select | list }}',
    '{"xs": [0, 1, 2, 3]}',
  ],
  [
    '{{ "s" is iterable }}{{ d is iterable }}{{ d is mapping }}{{ 1.0 is integer }}{{ true is number }}{{ none is none }}{{ u is defined }}',
    '{"d": {}}',
  ],
  ['{{ "a" ~ x ~ n }}', '{"x": null, "n": 1.5}'],
  ['{{ "a" + x }}', '{"x": null}'],
  ['{{ "a" + d }}', '{"d": {"k": 1}}'],
  ['{{ n + "a" }}', '{"n": 1}'],
  ['{{ raise_exception("no " + x) }}', '{"x": "way"}'],
  ['{{ strftime_now("%Y-%m-%d %b %B %a %H:%M") }}', '{}'],
  ['{%- for i in range(3) %}{{ i }},{% endfor %}{{ "%s" % 1 if false else "-" }}', '{}'],
] as const

describe('templates under the simulator’s interpreter', () => {
  it('print and fail as Python’s jinja2 does in transformers’ environment', () => {
    const expected = pythonRenders(cases.map(([template, variables]) => ({ template, variables })))
    const got = cases.map(([template, variables]) => jsRender(template, variables))
    for (const [i, [template]] of cases.entries()) {
      const want = JSON.parse(expected[i] as string) as { text?: string; error?: string }
      const have = JSON.parse(got[i] as string) as { text?: string; error?: string }
      if (want.text !== undefined) expect(have, template).toEqual(want)
      else if (want.error?.startsWith('TemplateError') || want.error?.startsWith('TypeError'))
        expect(have.error, template).toBe(want.error)
      else expect(have.error, template).toBeDefined()
    }
  })
})
