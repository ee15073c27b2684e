import { describe, expect, it } from 'vitest'
import { loadSimModel } from '../../../control-plane/lab/sim/model/create-sim-model.ts'
import { type PyValue, parsePythonJson } from '../../../control-plane/lab/sim/model/python-json.ts'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import { promptIds } from '../../../control-plane/tokenizer/prompt-ids.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'

/**
 * Images in a chat: Gemma 3 takes them (its processor's placeholder tokens), the other
 * built-ins refuse them as vLLM refuses them for a text-only model. The router's ids and
 * image ranges are compared with the simulated pod's own model (control-plane/lab/sim/model),
 * which implements Gemma 3's processor apart from the router.
 */

const gemma = createTokenizer('gemma3')
const simLoad = loadSimModel('gemma3')
if (!simLoad.ok) throw simLoad.error
const sim = simLoad.model

const image = (url: string, uuid?: string) => ({
  type: 'image_url',
  image_url: { url },
  ...(uuid === undefined ? {} : { uuid }),
})

/** The simulated pod's prompt for the same messages, read from their JSON as vLLM reads it. */
function simPrompt(messages: unknown[]) {
  return sim.renderChat({
    messages: parsePythonJson(JSON.stringify(messages)) as PyValue[],
    tools: null,
    documents: null,
    addGenerationPrompt: true,
    continueFinalMessage: false,
    chatTemplateKwargs: null,
    reasoningEffort: null,
    addSpecialTokens: false,
  })
}

function refusal(run: () => unknown): KinfError {
  try {
    run()
  } catch (error) {
    if (KinfError.isInstance(error)) return error
    throw error
  }
  throw new Error('expected a KinfError')
}

describe('a Gemma 3 chat with images', () => {
  const messages = [
    { role: 'system', content: 'Describe images.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        image('https://example.com/a.png', 'photo-a'),
        { type: 'text', text: 'And this?' },
        image('data:image/png;base64,AAAA'),
      ],
    },
  ]

  it('expands each image as the pod does and gives the identified ones their ranges', () => {
    const prompt = gemma.applyChatTemplate(messages)
    const pod = simPrompt(messages)
    expect(prompt.text).toBe(pod.text)
    expect(prompt.tokenIds).toEqual(pod.tokenIds)
    // Only the image with a uuid: the other's identity is a hash of its pixels.
    const [first] = pod.multimodal
    expect(first?.identifier).toBe('photo-a')
    expect(prompt.mmFeatures).toEqual([
      { identifier: 'photo-a', offset: first?.offset, length: first?.length },
    ])
    // The range is the processor's whole replacement: "\n\n", boi, 256 soft tokens, eoi, "\n\n".
    expect(prompt.mmFeatures?.[0]?.length).toBe(260)
    const [boi, soft] = gemma.encode('<start_of_image><image_soft_token>', {
      addSpecialTokens: false,
    })
    const offset = prompt.mmFeatures?.[0]?.offset ?? -1
    expect(prompt.tokenIds[offset + 1]).toBe(boi)
    expect(prompt.tokenIds.slice(offset + 2, offset + 258)).toEqual(Array(256).fill(soft))
    expect(prompt.tokenIds.filter((id) => id === boi)).toHaveLength(2)
  })

  it('counts the same ids through promptIds, and no mmFeatures for a chat without images', () => {
    const parsed = parseOpenAiRequest('chat', { messages })
    if ('issues' in parsed) throw new Error(parsed.issues.message)
    expect(promptIds(gemma, parsed.request)).toEqual(simPrompt(messages).tokenIds)
    expect(gemma.applyChatTemplate([{ role: 'user', content: 'Hi' }]).mmFeatures).toBeUndefined()
  })

  it('refuses an image part with neither URL nor uuid', () => {
    const bare = refusal(() =>
      gemma.applyChatTemplate([{ role: 'user', content: [{ type: 'image_url' }] }]),
    )
    expect([bare.code, bare.message]).toEqual([
      'invalid_request',
      'An image part needs an image_url or a uuid.',
    ])
  })

  it('refuses more placeholders than images, and tokenizes a spelled one when there are none', () => {
    const extra = refusal(() =>
      gemma.applyChatTemplate([
        {
          role: 'user',
          content: [{ type: 'text', text: 'Look: <start_of_image>' }, image('u', 'a')],
        },
      ]),
    )
    expect(extra.code).toBe('invalid_request')
    expect(extra.message).toMatch(/^Expected there to be 1 prompt updates/)
    // Without images vLLM runs no processor: the text's <start_of_image> is one token.
    const spelled = [{ role: 'user', content: 'Look: <start_of_image>' }]
    const prompt = gemma.applyChatTemplate(spelled)
    expect(prompt.tokenIds).toEqual(simPrompt(spelled).tokenIds)
    expect(prompt.mmFeatures).toBeUndefined()
  })
})

describe('a text-only model', () => {
  it('refuses an image part with invalid_request, as vLLM refuses it, and does not crash', () => {
    const qwen = createTokenizer('qwen3')
    const error = refusal(() =>
      qwen.applyChatTemplate([
        { role: 'user', content: [image('https://example.com/a.png', 'a')] },
      ]),
    )
    expect([error.code, error.param]).toEqual(['invalid_request', 'messages'])
    expect(error.message).toMatch(/takes no images/)
    // Audio and video parts are refused by every model here, naming what can be tokenized.
    const audio = refusal(() =>
      gemma.applyChatTemplate([
        { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x' } }] },
      ]),
    )
    expect([audio.code, audio.message]).toEqual([
      'invalid_request',
      'messages[0].content: expected a string or an array of text parts ({"type": "text", "text": string}) or image parts',
    ])
  })
})
