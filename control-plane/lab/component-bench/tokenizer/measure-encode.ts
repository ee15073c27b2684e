/**
 * Prints how long tokenizing a ~2,400-token chat prompt takes: cold, with the segment
 * cache warm, and with only the system prompt cached (the README as system prompt, part of
 * a source file as user message). A measurement to read, not a test.
 *
 *   npx node control-plane/lab/component-bench/tokenizer/measure-encode.ts [tokenizer source, default qwen3]
 */
import { readFileSync } from 'node:fs'
import { createTokenizer } from '../../../tokenizer/create-tokenizer.ts'
import type { VllmChatMessageInput } from '../../../tokenizer/vllm-chat-message.ts'

const here = new URL('.', import.meta.url)
const systemPrompt = readFileSync(new URL('../../../../README.md', here), 'utf8')
const question = readFileSync(new URL('read-python-json.ts', here), 'utf8').slice(0, 3000)
const source = process.argv[2] ?? 'qwen3'

function conversation(turn: number): VllmChatMessageInput[] {
  return [
    { role: 'system', content: systemPrompt },
    { role: 'user', content: `Review this file (turn ${turn}):\n\n${question}` },
  ]
}

function time(run: () => unknown): number {
  const start = performance.now()
  run()
  return performance.now() - start
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const loadMs = time(() => createTokenizer(source))
const tokenizer = createTokenizer(source)
const renderer = createTokenizer(source, { segmentCache: { maxEntries: 0 } })
const prompt = (turn: number) => renderer.applyChatTemplate(conversation(turn)).text
const text = prompt(0)

const coldMs = time(() => tokenizer.encode(text))
const uncached = createTokenizer(source, { segmentCache: { maxEntries: 0 } })
const uncachedMs = median(Array.from({ length: 50 }, () => time(() => uncached.encode(text))))
const warmMs = median(Array.from({ length: 500 }, () => time(() => tokenizer.encode(text))))
const newTurns = Array.from({ length: 50 }, (_, index) => prompt(index + 1))
const newUserMs = median(newTurns.map((turnText) => time(() => tokenizer.encode(turnText))))
const chatWarmMs = median(
  Array.from({ length: 200 }, () => time(() => tokenizer.applyChatTemplate(conversation(0)))),
)

const lines = [
  `tokenizer: ${source}`,
  `prompt: ${tokenizer.encode(text).length} tokens, system prompt ${tokenizer.encode(systemPrompt).length}`,
  `load tokenizer files (once per process): ${loadMs.toFixed(0)} ms`,
  `encode, first call in the process (all caches cold): ${coldMs.toFixed(2)} ms`,
  `encode, segment cache off (BPE word cache warm): ${uncachedMs.toFixed(2)} ms`,
  `encode, system prompt cached, new user message: ${newUserMs.toFixed(2)} ms`,
  `encode, segment cache warm: ${warmMs.toFixed(3)} ms`,
  `applyChatTemplate (validate + render + encode), cache warm: ${chatWarmMs.toFixed(3)} ms`,
]
process.stdout.write(`${lines.join('\n')}\n`)
