import type { ServerResponse } from 'node:http'
import type { RequestKind } from '../../shared/openai/openai-request.ts'
import type { TokenOutput } from './engine/vllm-engine.ts'
import { parseGenerationRequest } from './generation-request.ts'
import { completionBody, createChunkWriter, usage } from './generation-response.ts'
import type { SimPodContext } from './sim-pod-context.ts'
import { VllmError } from './vllm-error.ts'

/**
 * POST /v1/chat/completions and /v1/completions: validate as vLLM does, plan the output,
 * hand the request to the engine, and write tokens as the engine produces them (SSE) or
 * the whole answer at the end. A client that goes away aborts its request in the engine.
 */
export function handleGeneration(
  context: SimPodContext,
  kind: RequestKind,
  body: unknown,
  res: ServerResponse,
  headers: Record<string, string>,
  receivedAtMs = performance.now(),
): void {
  const { config, tokenizer } = context
  const request = parseGenerationRequest(kind, body, tokenizer, {
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
  const plan = context.planOutput(request)
  const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${context.newId()}`
  const created = Math.floor(Date.now() / 1000)
  const promptTokens = request.promptTokenIds.length
  const runtime = context.runtime()
  const writer = createChunkWriter(kind, id, created, config.modelName)
  const stallAfter = faults.stallAfterTokens
  const text: string[] = []
  let cachedTokens = 0
  let generated = 0
  let done = false
  // Modelled times, for the x-kinference-sim-* headers of non-streamed answers.
  let arrivalMs = 0
  let startMs = 0
  let firstTokenMs = 0

  const finish = (final: string) => {
    done = true
    context.inflight.delete(cancel)
    res.end(final)
  }
  const cancel = (message: string) => {
    if (done) return
    if (request.stream) finish(writer.error(500, message) + writer.done())
    else {
      res.writeHead(500, { 'content-type': 'application/json', ...headers })
      finish(JSON.stringify(new VllmError(500, message).toBody()))
    }
  }
  const onToken = (output: TokenOutput, virtualMs: number) => {
    generated++
    if (output.index === 0) {
      firstTokenMs = virtualMs
      const requestId = headers['x-request-id'] ?? id
      context.timings.record({ requestId, ttftMs: performance.now() - receivedAtMs })
    }
    const piece = plan.pieces[output.index] ?? ''
    if (!request.stream) {
      text.push(piece)
      if (output.finished) {
        const totals = usage(promptTokens, generated, cachedTokens)
        res.writeHead(200, {
          'content-type': 'application/json',
          ...headers,
          ...modelledTimes(arrivalMs, startMs, firstTokenMs, virtualMs),
        })
        finish(
          JSON.stringify(
            completionBody(
              kind,
              id,
              created,
              config.modelName,
              text.join(''),
              output.finished,
              totals,
            ),
          ),
        )
      }
      return
    }
    // A stalled stream keeps its connection and sends nothing more (fault injection).
    if (stallAfter !== null && output.index >= stallAfter) return
    const running = request.continuousUsage ? usage(promptTokens, generated, cachedTokens) : null
    const chunk =
      (output.index === 0 ? writer.role() : '') + writer.token(piece, output.finished, running)
    if (!output.finished) {
      res.write(chunk)
      return
    }
    const tail = request.includeUsage
      ? writer.usage(usage(promptTokens, generated, cachedTokens))
      : ''
    finish(chunk + tail + writer.done())
  }

  if (request.stream) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...headers,
    })
    res.flushHeaders()
  }
  context.inflight.add(cancel)
  res.on('close', () => {
    context.inflight.delete(cancel)
    if (!done) runtime.abort(id)
  })
  arrivalMs = runtime.submit(
    {
      id,
      promptTokenIds: request.promptTokenIds,
      outputTokenIds: plan.tokenIds,
      finishReason: plan.finishReason,
      cacheSalt: request.cacheSalt,
      maxTokens: request.maxTokens,
    },
    {
      onStart: (numCachedTokens, virtualMs) => {
        cachedTokens = numCachedTokens
        startMs = virtualMs
      },
      onToken,
    },
  )
}

/**
 * Non-standard headers with the request's times in modelled milliseconds (not scaled
 * wall time), so tests and benchmarks can compare what the GPU model predicts.
 */
function modelledTimes(arrivalMs: number, startMs: number, firstTokenMs: number, endMs: number) {
  const ms = (value: number) => value.toFixed(3)
  return {
    'x-kinference-sim-queue-ms': ms(startMs - arrivalMs),
    'x-kinference-sim-ttft-ms': ms(firstTokenMs - arrivalMs),
    'x-kinference-sim-e2e-ms': ms(endMs - arrivalMs),
  }
}
