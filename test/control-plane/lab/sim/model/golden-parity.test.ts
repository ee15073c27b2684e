import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  loadSimModel,
  type SimModel,
} from '../../../../../control-plane/lab/sim/model/create-sim-model.ts'
import {
  isPyDict,
  type PyDict,
  type PyValue,
  parsePythonJson,
} from '../../../../../control-plane/lab/sim/model/python-json.ts'
import type { ChatRequestInput } from '../../../../../control-plane/lab/sim/model/render-chat-prompt.ts'
import { goldenFamilies, readGoldens } from '../../../tokenizer/fixtures/read-goldens.ts'

/**
 * The goldens' requests as Python holds them: make-goldens.py prints them as the reference
 * rendered them. golden-*.jsonl keeps the rendered text and ids, but its requests went
 * through JavaScript's JSON, where a tool's `"maximum": 50.0` became `50`, which Python
 * (and so vLLM) renders differently.
 */
function pythonRequests(): Map<string, PyDict> {
  const root = fileURLToPath(new URL('../../../../../', import.meta.url))
  const script = fileURLToPath(
    new URL('../../../tokenizer/fixtures/make-goldens.py', import.meta.url),
  )
  const out = spawnSync('python3', [script, root], { encoding: 'utf8', maxBuffer: 1 << 28 })
  if (out.status !== 0) throw new Error(`make-goldens.py: ${out.stderr}`)
  const requests = new Map<string, PyDict>()
  for (const line of out.stdout.split('\n')) {
    if (line === '') continue
    const record = parsePythonJson(line) as PyDict
    const kind = record.get('kind')
    if (kind === 'chat' || kind === 'error')
      requests.set(`${record.get('family')}/${record.get('name')}`, record)
  }
  return requests
}

const requests = pythonRequests()

function requestNamed(family: string, name: string): PyDict {
  const request = requests.get(`${family}/${name}`)
  if (request === undefined) throw new Error(`make-goldens.py has no ${family} case "${name}"`)
  return request
}

function requestOf(raw: PyDict): ChatRequestInput {
  const options = raw.get('options') as PyDict
  const tools = raw.get('tools')
  return {
    messages: raw.get('messages') as PyValue[],
    tools: Array.isArray(tools) ? tools : null,
    documents: options.get('documents') ?? null,
    addGenerationPrompt: options.get('addGenerationPrompt') === true,
    continueFinalMessage: options.get('continueFinalMessage') === true,
    chatTemplateKwargs: isPyDict(options.get('chatTemplateKwargs'))
      ? (options.get('chatTemplateKwargs') as PyDict)
      : null,
    reasoningEffort: null,
    addSpecialTokens: false,
  }
}

describe.each(goldenFamilies)(
  'the simulator’s own %s tokenizer and template against the goldens',
  (family) => {
    const goldens = readGoldens(family)
    const loaded = loadSimModel(family, { now: () => new Date(goldens.meta.now) })
    if (!loaded.ok) throw loaded.error
    const model: SimModel = loaded.model

    it('encodes and decodes as Hugging Face’s Rust tokenizers', () => {
      for (const golden of goldens.encodes)
        expect(model.encode(golden.text), golden.text).toEqual(golden.ids)
      for (const golden of goldens.decodes) {
        expect(model.decode(golden.ids)).toBe(golden.text)
        expect(model.decode(golden.ids, { skipSpecialTokens: true })).toBe(golden.skipSpecial)
      }
    })

    it('renders and tokenizes every chat as Python’s jinja2 and vLLM do', () => {
      const failures: string[] = []
      for (const golden of goldens.chats) {
        try {
          const prompt = model.renderChat(requestOf(requestNamed(family, golden.name)))
          if (prompt.text !== golden.text) failures.push(`${golden.name}: text differs`)
          else if (JSON.stringify(prompt.tokenIds) !== JSON.stringify(golden.ids))
            failures.push(`${golden.name}: ids differ`)
        } catch (error) {
          failures.push(`${golden.name}: ${(error as Error).message}`)
        }
      }
      expect(failures).toEqual([])
    })

    it('refuses what vLLM answers 400 to', () => {
      for (const golden of goldens.errors) {
        const request = requestOf(requestNamed(family, golden.name))
        expect(() => model.renderChat(request), golden.name).toThrow(
          expect.objectContaining({ code: 'invalid_request' }),
        )
      }
    })
  },
)
