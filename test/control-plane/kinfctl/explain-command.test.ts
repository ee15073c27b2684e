import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import { promptIds } from '../../../control-plane/tokenizer/prompt-ids.ts'
import { parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'
import type { PolicyDecision, PolicyRequest } from '../../../shared/policy/policy-decision.ts'
import { examplesDir } from '../../support/read-yaml-documents.ts'
import { runCli } from '../../support/run-cli.ts'

let dir: string
let snapshot: string

/** Writes a file in the test's temporary folder and returns its path. */
function file(name: string, content: string): string {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kinfctl-explain-'))
  snapshot = join(dir, 'snapshot.json')
  const { code, stderr } = await runCli(['compile', examplesDir, '--out', snapshot])
  expect(stderr).toMatch(/^compiled /)
  expect(code).toBe(0)
})

interface JsonExplanation {
  request: PolicyRequest
  detectedLabels: string[]
  poolsToAsk: string[]
  decision: PolicyDecision
}

async function explainJson(args: string[], stdin = '') {
  const { code, stdout, stderr } = await runCli(
    ['explain', '--snapshot', snapshot, ...args, '--output', 'json'],
    stdin,
  )
  expect(stderr).toBe('')
  expect(code).toBe(0)
  return JSON.parse(stdout) as JsonExplanation
}

const backends = (decision: PolicyDecision) =>
  decision.kind === 'serve' ? decision.attempts.map((a) => a.backend) : decision.kind

describe('kinfctl explain', () => {
  it('keeps a prompt with a card number in the cluster and prints why', async () => {
    const prompt = file('card.txt', 'My card is 4111 1111 1111 1111; why was I charged twice?')
    const { code, stdout } = await runCli([
      'explain',
      '--snapshot',
      snapshot,
      '--tenant',
      'initech-health',
      '--model',
      'qwen3.8-27b-fp8',
      '--prompt-file',
      prompt,
      '--pool',
      'qwen-27b=1.3:8000',
    ])
    expect(code).toBe(0)
    expect(stdout).toMatch(
      /^decision: serve model qwen3.8-27b-fp8 \(policy kinference\/pii-stays-local, rule pii-on-own-gpus\)/,
    )
    expect(stdout).toMatch(/detected \[pii, pii:card\]/)
    expect(stdout).toMatch(
      /1\. kinference\/qwen-27b-local {2}InCluster {2}pool kinference\/qwen-27b/,
    )
    expect(stdout).toMatch(/2\. kinference\/qwen-8b-local {2}InCluster/)
    expect(stdout).not.toMatch(/External/)
    expect(stdout).toMatch(/constraint pii-in-cluster: request carries pii, pii:card/)
  })

  it('bursts the same tenant’s clean prompt to Bedrock when the pool is saturated', async () => {
    const prompt = file('clean.txt', 'Summarise the plot of Hamlet in two sentences.')
    const args = [
      '--tenant',
      'initech-health',
      '--model',
      'qwen3.8-27b-fp8',
      '--prompt-file',
      prompt,
    ]
    const busy = await explainJson([...args, '--pool', 'kinference/qwen-27b=1.3:8000'])
    expect(busy.detectedLabels).toEqual([])
    expect(backends(busy.decision)).toEqual([
      'kinference/bedrock-claude',
      'kinference/qwen-27b-local',
    ])
    expect(busy.poolsToAsk).toEqual(['kinference/qwen-27b'])
    // A failed detector is treated as PII: fail closed.
    const failed = await explainJson([...args, '--pool', 'qwen-27b=1.3', '--detector-failed'])
    expect(failed.request.detectorFailed).toBe(true)
    expect(failed.decision).toMatchObject({ kind: 'serve', rule: 'pii-on-own-gpus' })
  })

  it('counts tokens of a JSON chat body with the chat template and follows its alias', async () => {
    const messages = [
      { role: 'system', content: 'You answer in one word.' },
      { role: 'user', content: 'What colour is the sky?' },
    ]
    const prompt = file('chat.json', JSON.stringify({ model: 'gpt-4o', messages }))
    const result = await explainJson(['--tenant', 'hooli', '--prompt-file', prompt])
    const expected = createTokenizer('qwen3').applyChatTemplate(messages as never).tokenIds.length
    expect(result.request).toMatchObject({ model: 'gpt-4o', promptTokens: expected })
    expect(result.decision).toMatchObject({
      kind: 'serve',
      rule: 'serve-27b',
      model: 'qwen3.8-27b-fp8',
    })
    expect(result.decision.trace[0]).toMatchObject({ rule: 'gpt-4o-is-27b', outcome: 'rewrote' })
  })

  it('counts with the tokenizer of the pools serving the model, or the one given', async () => {
    // The examples with the 8B pool serving Llama 3.1's tokenizer.
    const examples = join(dir, 'mixed-tokenizers')
    cpSync(examplesDir, examples, { recursive: true })
    const platform = join(examples, 'platform.yaml')
    const yaml = readFileSync(platform, 'utf8')
    const mixed = yaml.replace(/(- name: qwen3-8b\n\s+tokenizer: )qwen3/, '$1llama3.1')
    expect(mixed).not.toBe(yaml)
    writeFileSync(platform, mixed)
    const mixedSnapshot = join(dir, 'mixed.json')
    expect((await runCli(['compile', examples, '--out', mixedSnapshot])).code).toBe(0)

    const messages = [{ role: 'user', content: 'Tokenizers differ: ¿qué tal? 東京 🚀' }]
    const count = (tokenizer: string) =>
      createTokenizer(tokenizer).applyChatTemplate(messages).tokenIds.length
    expect(count('llama3.1')).not.toBe(count('qwen3'))
    const explain = async (model: string, ...args: string[]) => {
      const prompt = file(`${model}.json`, JSON.stringify({ model, messages }))
      const { code, stdout, stderr } = await runCli([
        'explain',
        '--snapshot',
        mixedSnapshot,
        '--tenant',
        'free-tier',
        '--prompt-file',
        prompt,
        '--output',
        'json',
        ...args,
      ])
      return { code, stderr, json: code === 0 ? (JSON.parse(stdout) as JsonExplanation) : null }
    }
    expect((await explain('qwen3-8b')).json?.request.promptTokens).toBe(count('llama3.1'))
    expect((await explain('qwen3.8-27b-fp8')).json?.request.promptTokens).toBe(count('qwen3'))
    expect((await explain('qwen3-8b', '--tokenizer', 'gemma3')).json?.request.promptTokens).toBe(
      count('gemma3'),
    )
    // An alias no pool serves, and pools that disagree: only --tokenizer settles it.
    const alias = await explain('gpt-4o')
    expect(alias.code).toBe(2)
    expect(alias.stderr).toMatch(
      /--tokenizer is required: the pools use (qwen3, llama3\.1|llama3\.1, qwen3)/,
    )
  })

  it('reads a chat body’s tool schemas as vLLM does: 50.0 stays a float', async () => {
    const text =
      '{"model":"qwen3-8b","messages":[{"role":"user","content":"Heat it"}],"tools":[{"type":"function","function":{"name":"set_temperature","parameters":{"type":"object","properties":{"celsius":{"type":"number","default":50.0,"maximum":1e3}}}}}]}'
    const parsed = parseOpenAiRequest('chat', JSON.parse(text))
    if ('issues' in parsed) throw new Error(parsed.issues.message)
    const tokenizer = createTokenizer('qwen3')
    const asVllm = promptIds(tokenizer, parsed.request, text).length
    expect(asVllm).not.toBe(promptIds(tokenizer, parsed.request).length)
    const result = await explainJson(['--tenant', 'free-tier', '--prompt-file', '-'], text)
    expect(result.request.promptTokens).toBe(asVllm)
  })

  it('counts a completions prompt with the tokenizer, read from standard input', async () => {
    const body = JSON.stringify({ model: 'qwen3-8b', prompt: 'Once upon a time' })
    const result = await explainJson(['--tenant', 'free-tier', '--prompt-file', '-'], body)
    expect(result.request.promptTokens).toBe(
      createTokenizer('qwen3').encode('Once upon a time').length,
    )
    expect(backends(result.decision)).toEqual(['kinference/qwen-8b-local'])
  })

  it('rejects a long free-tier prompt with 413 and still exits 0', async () => {
    const prompt = file('long.txt', 'lorem ipsum dolor sit amet '.repeat(1200))
    const { code, stdout } = await runCli([
      'explain',
      '--snapshot',
      snapshot,
      '--tenant',
      'free-tier',
      '--model',
      'qwen3-8b',
      '--prompt-file',
      prompt,
    ])
    expect(code).toBe(0)
    expect(stdout).toMatch(
      /^decision: reject 413 prompt_too_long_for_plan \(policy kinference\/tenant-limits, rule free-tier-prompt-cap\)/,
    )
    expect(stdout).toMatch(/message: {2}The free tier accepts prompts of at most 4,096 tokens/)
    expect(stdout).toMatch(/skipped {4}longer-than-context: promptTokens \d+ < min 32000/)
  })

  it('prefers the cheap backend unless the big one is predicted much faster', async () => {
    const prompt = file('hi.txt', 'Hello!')
    const args = ['--tenant', 'acme-support', '--model', 'chat', '--prompt-file', prompt]
    const close = await explainJson([
      ...args,
      '--pool',
      'qwen-8b=0.2:300',
      '--pool',
      'qwen-27b=0.2:250',
    ])
    expect(backends(close.decision)).toEqual([
      'kinference/qwen-8b-local',
      'kinference/qwen-27b-local',
    ])
    const far = await explainJson([
      ...args,
      '--pool',
      'qwen-8b=0.2:900',
      '--pool',
      'qwen-27b=0.2:100',
    ])
    expect(backends(far.decision)).toEqual([
      'kinference/qwen-27b-local',
      'kinference/qwen-8b-local',
    ])
  })

  it('defers batch work while the pool is busy', async () => {
    const prompt = file('batch.txt', 'Classify this ticket.')
    const { code, stdout } = await runCli([
      'explain',
      '--snapshot',
      snapshot,
      '--tenant',
      'umbrella-analytics',
      '--model',
      'qwen3.8-27b-fp8',
      '--prompt-file',
      prompt,
      '--labels',
      'batch',
      '--pool',
      'qwen-27b=0.6',
    ])
    expect(code).toBe(0)
    expect(stdout).toMatch(
      /^decision: defer \(policy kinference\/batch-on-idle-gpu, rule batch-waits-for-idle\)/,
    )
    expect(stdout).toMatch(/429 with Retry-After: 60/)
    expect(stdout).toMatch(/given \[batch\]/)
  })

  it('reports an unknown tenant and a model the tenant may not use as decisions', async () => {
    const prompt = file('x.txt', 'x')
    const unknown = await explainJson([
      '--tenant',
      'nobody',
      '--model',
      'm',
      '--prompt-file',
      prompt,
    ])
    expect(unknown.decision).toMatchObject({ kind: 'reject', status: 401 })
    const notAllowed = await explainJson([
      '--tenant',
      'free-tier',
      '--model',
      'qwen3.8-27b-fp8',
      '--prompt-file',
      prompt,
    ])
    expect(notAllowed.decision).toMatchObject({
      kind: 'reject',
      status: 404,
      code: 'model_not_found',
    })
  })

  describe('bad input exits 1', () => {
    const cases: [string, () => string[], RegExp][] = [
      [
        'a snapshot whose hash does not match',
        () => {
          const tampered = JSON.parse(readFileSync(snapshot, 'utf8'))
          tampered.tenants['free-tier'] = 'kinference/burst-to-bedrock'
          return [
            '--snapshot',
            file('tampered.json', JSON.stringify(tampered)),
            '--prompt-file',
            file('p1.txt', 'hi'),
          ]
        },
        /does not match its content/,
      ],
      [
        'a snapshot that is not JSON',
        () => ['--snapshot', file('not.json', 'kind: x'), '--prompt-file', file('p2.txt', 'hi')],
        /is not JSON/,
      ],
      [
        'a missing snapshot',
        () => ['--snapshot', join(dir, 'absent.json'), '--prompt-file', file('p3.txt', 'hi')],
        /cannot read snapshot/,
      ],
      [
        'a missing prompt file',
        () => ['--snapshot', snapshot, '--prompt-file', join(dir, 'absent.txt')],
        /cannot read prompt file/,
      ],
      [
        'a JSON object that is no request',
        () => ['--snapshot', snapshot, '--prompt-file', file('obj.json', '{"model":"m"}')],
        /"messages" or "prompt"/,
      ],
      [
        'a tokenizer path it cannot load',
        () => [
          '--snapshot',
          snapshot,
          '--prompt-file',
          file('p4.txt', 'hi'),
          '--tokenizer',
          join(dir, 'no-model'),
        ],
        /tokenizer .*no-model: no such directory/,
      ],
      [
        'a chat body with bad messages',
        () => ['--snapshot', snapshot, '--prompt-file', file('empty.json', '{"messages":[]}')],
        /prompt file: .*messages/,
      ],
    ]
    it.each(cases)('%s', async (_name, args, message) => {
      const { code, stderr } = await runCli([
        'explain',
        '--tenant',
        'free-tier',
        '--model',
        'qwen3-8b',
        ...args(),
      ])
      expect(stderr).toMatch(message)
      expect(code).toBe(1)
    })
  })

  describe('usage errors exit 2', () => {
    const cases: [string, string[], RegExp][] = [
      ['no tenant', ['--model', 'm'], /--tenant is required/],
      ['a bad label', ['--tenant', 't', '--model', 'm', '--labels', 'PII'], /"PII" is not a label/],
      [
        'a bad pool status',
        ['--tenant', 't', '--model', 'm', '--pool', 'qwen-27b=busy'],
        /NAME=SATURATION/,
      ],
      ['an unknown pool', ['--tenant', 't', '--model', 'm', '--pool', 'gpu=0.5'], /no pool "gpu"/],
      ['an unknown format', ['--tenant', 't', '--model', 'm', '--output', 'yaml'], /text or json/],
      ['no model anywhere', ['--tenant', 't'], /--model is required/],
      ['an unknown option', ['--tenant', 't', '--fast'], /Unknown option/],
      [
        'an unknown tokenizer',
        ['--tenant', 't', '--model', 'm', '--tokenizer', 'llama3'],
        /--tokenizer: unknown tokenizer "llama3": expected one of qwen3, llama3\.1, gpt-oss, gemma3, deepseek-v3/,
      ],
    ]
    it.each(cases)('%s', async (_name, args, message) => {
      const prompt = file('usage.txt', 'hi')
      const { code, stderr } = await runCli([
        'explain',
        '--snapshot',
        snapshot,
        '--prompt-file',
        prompt,
        ...args,
      ])
      expect(stderr).toMatch(message)
      expect(stderr).toMatch(/Usage: kinfctl explain/)
      expect(code).toBe(2)
    })
  })
})
