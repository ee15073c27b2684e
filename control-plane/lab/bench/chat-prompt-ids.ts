/** The fixed tokens of a plain Qwen3 chat around each message's content. */
export interface ChatFrame {
  open: Record<'system' | 'user' | 'assistant', readonly number[]>
  close: readonly number[]
  generation: readonly number[]
}

/** From the tokenizer the pods run (the simulator's model, or the router's). */
export function createChatFrame(tokenizer: { encode(text: string): number[] }): ChatFrame {
  return {
    open: {
      system: tokenizer.encode('<|im_start|>system\n'),
      user: tokenizer.encode('<|im_start|>user\n'),
      assistant: tokenizer.encode('<|im_start|>assistant\n'),
    },
    close: tokenizer.encode('<|im_end|>\n'),
    generation: tokenizer.encode('<|im_start|>assistant\n'),
  }
}

export interface ChatTurnIds {
  userIds: readonly number[]
  /** The answer, for turns before the last. */
  assistantIds?: readonly number[]
}

/**
 * The prompt token ids a vLLM pod computes for a plain chat whose contents are stable
 * words: the template's frame spliced around the content ids, with no tokenizer call (a
 * test checks it against the tokenizer and chat template). The discrete-event benchmark
 * uses it for every request.
 */
export function chatPromptIds(
  frame: ChatFrame,
  prefix: readonly number[] | null,
  turns: readonly ChatTurnIds[],
): number[] {
  const out: number[] = []
  const message = (role: 'system' | 'user' | 'assistant', ids: readonly number[]) => {
    for (const id of frame.open[role]) out.push(id)
    for (const id of ids) out.push(id)
    for (const id of frame.close) out.push(id)
  }
  if (prefix !== null) message('system', prefix)
  for (const turn of turns) {
    message('user', turn.userIds)
    if (turn.assistantIds !== undefined) message('assistant', turn.assistantIds)
  }
  for (const id of frame.generation) out.push(id)
  return out
}
