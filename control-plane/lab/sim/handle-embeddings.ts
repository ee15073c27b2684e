import type { ServerResponse } from 'node:http'
import { requestedDataParallelRank } from './data-parallel-rank-header.ts'
import { parseEmbeddingRequest } from './embedding-request.ts'
import { embeddingBase64, embeddingOf } from './embedding-vector.ts'
import { prefixCachingEnabled } from './sim-pod-config.ts'
import type { SimPodContext } from './sim-pod-context.ts'
import { VllmError } from './vllm-error.ts'

/**
 * POST /v1/embeddings on a pooling pod: validate as vLLM's ServingEmbedding does, run each
 * input as a prefill-only request through the engine (queueing and prefill cost as for
 * generation, `{id}-{i}` as vLLM names a batch's requests; with prefix caching, its cached
 * prefix reused and its full blocks cached), and answer once all are done with one vector
 * per input and the prompt tokens as usage.
 */
export async function handleEmbeddings(
  context: SimPodContext,
  body: unknown,
  res: ServerResponse,
  headers: Record<string, string>,
): Promise<void> {
  const { config, tokenizer } = context
  const model = (body as { model?: unknown } | null)?.model
  if (typeof model === 'string' && model !== config.modelName)
    throw new VllmError(404, `The model \`${model}\` does not exist.`, 'model')
  const request = parseEmbeddingRequest(body, tokenizer, {
    modelName: config.modelName,
    maxModelLen: config.profile.model.maxModelLen,
  })
  const faults = context.faults()
  if (faults.errorRate > 0 && context.random() < faults.errorRate) {
    throw new VllmError(
      500,
      'The simulated engine failed this request (fault injection: errorRate).',
    )
  }
  const id = `embd-${context.newId()}`
  const created = Math.floor(Date.now() / 1000)
  const runtime = context.runtime()
  const requestedRank = requestedDataParallelRank(res.req, config.dataParallelSize)
  const engineIds = request.prompts.map((_, index) => `${id}-${index}`)
  const caching = prefixCachingEnabled(config)
  let done = false
  let cancel: (message: string) => void = () => {}
  const cancelled = new Promise<never>((_, reject) => {
    cancel = (message) => reject(new VllmError(500, message))
  })
  context.inflight.add(cancel)
  res.on('close', () => {
    context.inflight.delete(cancel)
    if (done) return
    for (const engineId of engineIds) runtime.abort(engineId)
    cancel('The client closed the connection.')
  })
  const pooled = request.prompts.map(
    (promptTokenIds, index) =>
      new Promise<void>((resolve) => {
        runtime.submit(
          {
            id: engineIds[index] as string,
            promptTokenIds,
            outputTokenIds: [],
            finishReason: 'stop',
            // Without prefix caching a salt of its own keeps any block from being found in
            // the cache; with it, an input's blocks hash as the same prompt's would.
            cacheSalt: caching ? null : (engineIds[index] as string),
            maxTokens: 0,
          },
          {
            onStart: () => {},
            onToken: (output) => {
              if (output.pooled) resolve()
            },
          },
          requestedRank ?? runtime.pickRank(),
        )
      }),
  )
  try {
    await Promise.race([Promise.all(pooled), cancelled])
  } finally {
    done = true
    context.inflight.delete(cancel)
  }
  const data = request.prompts.map((ids, index) => {
    const vector = embeddingOf(ids, config.modelName, config.embeddingSize)
    const embedding =
      request.encodingFormat === 'base64'
        ? embeddingBase64(vector, request.endianness)
        : Array.from(vector)
    return { index, object: 'embedding', embedding }
  })
  const promptTokens = request.prompts.reduce((sum, ids) => sum + ids.length, 0)
  res.writeHead(200, { 'content-type': 'application/json', ...headers })
  res.end(
    JSON.stringify({
      id,
      object: 'list',
      created,
      model: config.modelName,
      data,
      // UsageInfo.model_dump(): completion_tokens defaults to 0, details to null.
      usage: {
        prompt_tokens: promptTokens,
        total_tokens: promptTokens,
        completion_tokens: 0,
        prompt_tokens_details: null,
      },
    }),
  )
}
