import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import type { KinferenceResource } from '../../../../shared/crd/resource.ts'
import { adminLookup, askChat, podTokenIds } from '../../../support/embedded-chat.ts'
import { start } from '../../../support/embedded-stack.ts'

// Images in the block keys, end to end: the pods serve Gemma 3 (the simulator's own model
// expands each image into its processor's placeholder tokens and hashes the blocks holding
// it with the image's identifier, the client's uuid), the scorer expands and keys them
// with the router's tokenizer and the index reads the pods' multimodal extra keys. A chat
// that shows the same image again must be routed onto that image's blocks, with the
// cached tokens the pod reports predicted; another image behind the same placeholder
// tokens must match nothing past the text before it, on the scorer's side as on the pod's.

const model = 'qwen3.8-27b-fp8'

const servingGemma = (resource: KinferenceResource) => {
  if (resource.kind !== 'InferencePool') return
  for (const served of resource.spec.models) if (served.name === model) served.tokenizer = 'gemma3'
}

const system = Array.from(
  { length: 20 },
  (_, i) => `Rule ${i + 1}: describe what the photo shows before you answer; item ${i * 3}.`,
).join('\n')

function withImage(uuid: string): unknown[] {
  return [
    { role: 'system', content: system },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this photo?' },
        { type: 'image_url', image_url: { url: 'https://images.example/photo.png' }, uuid },
      ],
    },
  ]
}

const ask = (stack: EmbeddedStack, messages: unknown[]) =>
  askChat(stack, { model, messages, max_tokens: 8, ignore_eos: true })

/** Pod `pod`'s matched blocks for a chat, as the scorer computes them. */
async function matchedBlocks(stack: EmbeddedStack, messages: unknown[], pod: string) {
  const report = await adminLookup(stack, { model, messages })
  return report.pods.find((p) => p.pod === pod)?.matchedBlocks ?? 0
}

describe('a chat with an image, end to end (edge, scorer, simulated Gemma 3 pods)', () => {
  let stack: EmbeddedStack
  beforeAll(async () => {
    stack = await start({ patch: servingGemma })
  }, 120_000)
  afterAll(() => stack?.close())

  it('goes back to the pod holding the same image, and matches no other image behind the same tokens', async () => {
    const first = await ask(stack, withImage('photo-a'))
    expect(first.pod).toMatch(/^sim-27b-/)
    const ids = await podTokenIds(stack, first.pod, { model, messages: withImage('photo-a') })
    expect(first.promptTokens).toBe(ids.length)
    for (let i = 0; i < 100; i++) {
      if ((await matchedBlocks(stack, withImage('photo-a'), first.pod)) > 0) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }

    const again = [
      ...withImage('photo-a'),
      { role: 'assistant', content: first.content },
      { role: 'user', content: 'And the colours?' },
    ]
    const second = await ask(stack, again)
    expect(second.pod).toBe(first.pod)
    // The image's 256 soft tokens are past the system prompt: a match that stopped at the
    // image would cover less than the first prompt.
    expect(second.matchedTokens).toBeGreaterThan(first.promptTokens - 32)
    expect(second.cachedTokens).toBe(second.matchedTokens)

    const other = withImage('photo-b')
    const otherBlocks = await matchedBlocks(stack, other, first.pod)
    const third = await ask(stack, other)
    expect(third.matchedTokens).toBeLessThan(first.promptTokens - 256)
    if (third.pod === first.pod) expect(third.cachedTokens).toBe(third.matchedTokens)
    expect(otherBlocks * 16).toBeLessThan(first.promptTokens - 256)
  }, 60_000)
})
