import { expect } from 'vitest'
import type { EmbeddedStack } from '../../control-plane/lab/embedded/start-embedded.ts'
import { post } from './embedded-stack.ts'

/** A chat answered through the edge, with what the scorer decided and the pod reported. */
export interface AnsweredChat {
  pod: string
  /** Prompt tokens the scorer predicted the pod holds (x-kinference-decision). */
  matchedTokens: number
  promptTokens: number
  /** The pod's usage.prompt_tokens_details.cached_tokens (0 when absent). */
  cachedTokens: number
  content: string
}

/** Posts a chat body to the edge, expects 200, and reads the decision and the usage. */
export async function askChat(stack: EmbeddedStack, body: object): Promise<AnsweredChat> {
  const response = await post(stack, body)
  const answer = (await response.json()) as {
    choices: { message: { content: string | null } }[]
    usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } | null }
  }
  expect(response.status, JSON.stringify(answer)).toBe(200)
  const decision = response.headers.get('x-kinference-decision') ?? ''
  return {
    pod: /pod=([^;]+)/.exec(decision)?.[1] ?? '',
    matchedTokens: Number(/matched_tokens=(\d+)/.exec(decision)?.[1] ?? Number.NaN),
    promptTokens: answer.usage.prompt_tokens,
    cachedTokens: answer.usage.prompt_tokens_details?.cached_tokens ?? 0,
    content: answer.choices[0]?.message.content ?? '',
  }
}

/** The scorer's POST /admin/lookup of a body: its ids and each pod's matched blocks. */
export async function adminLookup(stack: EmbeddedStack, body: object) {
  const response = await fetch(`${stack.scorer.url}/admin/lookup`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(response.status).toBe(200)
  return (await response.json()) as {
    tokenIds: number[] | null
    tokenizer: { loaded: boolean }
    pods: { pod: string; matchedBlocks: number }[]
  }
}

/** A pod's own ids for a chat body (vLLM's POST /tokenize). */
export async function podTokenIds(
  stack: EmbeddedStack,
  pod: string,
  body: object,
): Promise<number[]> {
  const target = stack.pods.find((p) => p.config.podName === pod) ?? stack.pods[0]
  const response = await fetch(`${target?.url}/tokenize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { tokens: number[] }).tokens
}
