import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { OpenAiRequest } from '../../shared/openai/openai-request.ts'
import type { Tokenizer } from './tokenizer.ts'

/**
 * The prompt token ids a vLLM pod runs for a request: for chat, the messages normalized,
 * the chat template rendered (add_generation_prompt, continue_final_message and
 * chat_template_kwargs as the request sets them) and tokenized without special tokens;
 * for completions, the prompt tokenized, or its ids as given. The router, the simulated
 * pods and kinfctl explain all count tokens here, so the router's ids are the pod's.
 * Throws KinfError invalid_request, naming the field, for what vLLM would refuse.
 */
export function promptIds(tokenizer: Tokenizer, request: OpenAiRequest): number[] {
  if (request.kind === 'chat') {
    const { body } = request
    return tokenizer.applyChatTemplate(body.messages, {
      addGenerationPrompt: body.add_generation_prompt,
      continueFinalMessage: body.continue_final_message,
      chatTemplateKwargs: body.chat_template_kwargs ?? {},
    }).tokenIds
  }
  const { prompt } = request.body
  if (typeof prompt === 'string') return tokenizer.encode(prompt)
  const outside = prompt.find((id) => id >= tokenizer.vocabSize)
  if (outside !== undefined)
    throw new KinfError('invalid_request', `Token id ${outside} is out of vocabulary`, {
      param: 'prompt',
    })
  return prompt
}
