import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import type { SimPod } from '../../../../control-plane/lab/sim/sim-pod.ts'
import { cached, chat, model, text, usePods } from '../../../support/sim-pods.ts'

const { pod } = usePods(afterEach)

async function post(target: SimPod, path: string, body: string) {
  const response = await fetch(`${target.url}${path}`, { method: 'POST', body })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer', maximum: 14 } },
      required: ['city'],
    },
  },
}
const conversation = [
  { role: 'system', content: 'You answer briefly.' },
  { role: 'user', content: 'Weather in Paris?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: 'c0',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city": "Paris"}' },
      },
    ],
  },
  { role: 'tool', tool_call_id: 'c0', content: 'sunny' },
]

describe('a simulated pod serving other models', () => {
  it.each(['llama3.1', 'gpt-oss', 'deepseek-v3', 'qwen3'])(
    '%s: a chat with tools runs the ids its own model renders, and /tokenize says the same',
    async (tokenizer) => {
      const target = await pod({ tokenizer })
      const own = loadSimModelAssets(tokenizer).tokenizer
      const expected = own.applyChatTemplate(conversation, { tools: [weather] }).tokenIds
      const answer = await chat(target, {
        messages: conversation,
        tools: [weather],
        max_tokens: 3,
        ignore_eos: true,
      })
      expect(answer.status).toBe(200)
      expect(answer.body.usage.prompt_tokens).toBe(expected.length)
      const tokenized = await post(
        target,
        '/tokenize',
        JSON.stringify({
          model,
          messages: conversation,
          tools: [weather],
          return_token_strs: true,
        }),
      )
      expect(tokenized.body.tokens).toEqual(expected)
      expect(tokenized.body.token_strs).toEqual(expected.map((id) => own.idToToken(id)))
      const back = await post(target, '/detokenize', JSON.stringify({ model, tokens: expected }))
      expect(back.body.prompt).toBe(own.decode(expected))
    },
  )

  it('renders a tool schema’s floats as Python does: 50.0 stays 50.0', async () => {
    const target = await pod()
    // JSON.stringify would write 50; the client's text says 50.0, as a Python client sends it.
    const body = `{"model": "${model}", "messages": [{"role": "user", "content": "Hi"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "number", "maximum": 50.0, "minimum": 1e-05}}}}}]}`
    const tokenized = await post(target, '/tokenize', body)
    const prompt = loadSimModelAssets('qwen3').tokenizer.decode(tokenized.body.tokens)
    expect(prompt).toContain('"maximum": 50.0, "minimum": 1e-05')
  })

  it('refuses what vLLM refuses, in its words', async () => {
    const target = await pod({ tokenizer: 'gemma3' })
    const twoUsers = await chat(target, {
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ],
      max_tokens: 2,
    })
    expect(twoUsers.status).toBe(400)
    expect(twoUsers.body.error?.message).toBe(
      'Conversation roles must alternate user/assistant/user/assistant/...',
    )
    const both = await post(
      target,
      '/v1/chat/completions',
      JSON.stringify({
        model,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
        ],
        continue_final_message: true,
      }),
    )
    expect(both.status).toBe(400)
    expect(both.body.error.type).toBe('Bad Request')
    expect(both.body.error.message).toMatch(
      /Cannot set both `continue_final_message` and `add_generation_prompt` to True/,
    )
    const template = await post(
      target,
      '/v1/chat/completions',
      JSON.stringify({
        model,
        messages: [{ role: 'user', content: 'a' }],
        chat_template: '{{ 1 }}',
      }),
    )
    expect(template.body.error.message).toMatch(/--trust-request-chat-template is not set/)
  })
})

describe('a simulated pod’s cached_tokens', () => {
  const ask = (target: SimPod, extra: object = {}) =>
    chat(target, {
      messages: [{ role: 'user', content: text(3, 300) }],
      max_tokens: 2,
      ignore_eos: true,
      ...extra,
    })

  it('are left out without --enable-prompt-tokens-details, as vLLM leaves them', async () => {
    const target = await pod({ enablePromptTokensDetails: false })
    await ask(target)
    const again = await ask(target)
    expect(again.body.usage.prompt_tokens).toBeGreaterThan(100)
    expect(again.body.usage.prompt_tokens_details).toBeUndefined()
  })

  it('are reported with it, 0 included, in the whole answer and the stream’s usage only', async () => {
    const target = await pod({ enablePromptTokensDetails: true })
    const first = await ask(target)
    expect(first.body.usage.prompt_tokens_details).toEqual({ cached_tokens: 0 })
    const second = await ask(target)
    expect(cached(second)).toBe(Math.floor((second.body.usage.prompt_tokens - 1) / 16) * 16)
    const stream = await fetch(`${target.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({
        model,
        messages: [{ role: 'user', content: text(3, 300) }],
        max_tokens: 3,
        ignore_eos: true,
        stream: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
      }),
    })
    const usages = (await stream.text())
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice(6)).usage)
      .filter(Boolean)
    const final = usages.at(-1)
    expect(final.prompt_tokens_details.cached_tokens).toBe(cached(second))
    for (const running of usages.slice(0, -1)) expect(running.prompt_tokens_details).toBeUndefined()
  })
})

describe('a simulated multimodal pod (Gemma 3)', () => {
  const image = (url: string) => ({
    role: 'user',
    content: [
      { type: 'text', text: text(5, 200) },
      { type: 'image_url', image_url: { url } },
      { type: 'text', text: 'What is in it?' },
    ],
  })

  it('expands each image into its soft tokens, and an image is part of the cached prefix', async () => {
    const target = await pod({ tokenizer: 'gemma3' })
    const gemma = loadSimModelAssets('gemma3').tokenizer
    const prompt = gemma.applyChatTemplate([image('data:image/png;base64,AAAA')])
    expect(prompt.multimodal).toHaveLength(1)
    const [feature] = prompt.multimodal
    const soft = gemma.tokenToId('<image_soft_token>')
    expect(prompt.tokenIds.filter((id) => id === soft)).toHaveLength(256)
    expect(
      gemma.decode(
        prompt.tokenIds.slice(feature?.offset, (feature?.offset ?? 0) + (feature?.length ?? 0)),
      ),
    ).toMatch(/^\n+<start_of_image>(<image_soft_token>){256}<end_of_image>\n\n$/)
    const ask = (url: string) =>
      chat(target, { messages: [image(url)], max_tokens: 2, ignore_eos: true })
    const first = await ask('https://example.com/cat.png')
    expect(first.body.usage.prompt_tokens).toBe(
      gemma.applyChatTemplate([image('https://example.com/cat.png')]).tokenIds.length,
    )
    const same = await ask('https://example.com/cat.png')
    const other = await ask('https://example.com/dog.png')
    // The other image's blocks differ from the image on: only the text before it is shared.
    expect(cached(same)).toBeGreaterThan(cached(other) + 256)
    expect(cached(other)).toBeLessThanOrEqual(feature?.offset ?? 0)
  })

  it('is refused by a text-only model', async () => {
    const target = await pod()
    const answer = await chat(target, {
      messages: [image('https://example.com/cat.png')],
      max_tokens: 2,
    })
    expect(answer.status).toBe(400)
    expect(answer.body.error?.message).toBe(
      'Multi-modal processor not available for text-only models',
    )
  })
})

describe('kinfctl sim --tokenizer --enable-prompt-tokens-details', () => {
  const kinfctl = (args: string[]) => {
    const child = spawn(process.execPath, ['control-plane/kinfctl/main.ts', 'sim', ...args])
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
    })
    return { child, out: () => out, err: () => err }
  }

  it('serves the named tokenizer and reports cached tokens', async () => {
    const sim = kinfctl([
      '--pods',
      '1',
      '--port',
      '0',
      '--zmq-port',
      '0',
      '--tokenizer',
      'gemma3',
      '--enable-prompt-tokens-details',
      '--output',
      'json',
    ])
    try {
      const deadline = performance.now() + 60_000
      while (!sim.out().includes('\n') && performance.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20))
      const { http } = JSON.parse(sim.out()) as { http: string }
      const messages = [{ role: 'user', content: 'Hi' }]
      const tokens = (await (
        await fetch(`${http}/tokenize`, { method: 'POST', body: JSON.stringify({ messages }) })
      ).json()) as { tokens: number[] }
      expect(tokens.tokens).toEqual(
        loadSimModelAssets('gemma3').tokenizer.applyChatTemplate(messages).tokenIds,
      )
      const answer = (await (
        await fetch(`${http}/v1/chat/completions`, {
          method: 'POST',
          body: JSON.stringify({ messages, max_tokens: 2 }),
        })
      ).json()) as { usage: { prompt_tokens_details?: unknown } }
      expect(answer.usage.prompt_tokens_details).toEqual({ cached_tokens: 0 })
    } finally {
      sim.child.kill('SIGINT')
      await once(sim.child, 'exit')
    }
  })

  it('refuses a tokenizer it cannot load, naming the choices', async () => {
    const sim = kinfctl(['--pods', '1', '--port', '0', '--zmq-port', '0', '--tokenizer', 'llama3'])
    const [code] = await once(sim.child, 'exit')
    expect(code).not.toBe(0)
    expect(sim.err()).toMatch(/llama3.*qwen3, llama3\.1, gpt-oss, gemma3, deepseek-v3/)
  })
})
