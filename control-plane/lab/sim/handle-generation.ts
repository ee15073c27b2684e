import type { ServerResponse } from 'node:http'
import type { RequestKind } from '../../../shared/openai/openai-request.ts'
import { simHeaderPrefix } from '../../../shared/policy/decision-headers-visible.ts'
import { requestedDataParallelRank } from './data-parallel-rank-header.ts'
import type { FinishReason, TokenOutput } from './engine/vllm-engine.ts'
import { type GenerationRequest, parseGenerationRequest } from './generation-request.ts'
import { completionBody, createChunkWriter, usage } from './generation-response.ts'
import type { PlannedOutput } from './output-planner.ts'
import type { SimPodConfig } from './sim-pod-config.ts'
import type { SimPodContext } from './sim-pod-context.ts'
import { VllmError } from './vllm-error.ts'

/** One of the request's n sequences, as the engine runs it. */
interface Choice {
  index: number
  engineId: string
  plan: PlannedOutput
  text: string[]
  generated: number
  finished: FinishReason | null
}

/**
 * POST /v1/chat/completions and /v1/completions: validate as vLLM does, plan the output,
 * hand the request to the engine, and write tokens as the engine produces them (SSE) or
 * the whole answer at the end. With n > 1 each choice is its own sequence in the engine
 * sharing the prompt, as vLLM V1 fans a request out into child requests; the usage counts
 * the prompt once and every choice's tokens. A client that goes away aborts its request.
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
  const loraName = loraAdapterOf(config, body)
  const servedAs = loraName ?? config.modelName
  const request = parseGenerationRequest(kind, body, tokenizer, {
    modelName: servedAs,
    maxModelLen: config.profile.model.maxModelLen,
  })
  const requestedRank = requestedDataParallelRank(res.req, config.dataParallelSize)
  const faults = context.faults()
  if (faults.errorRate > 0 && context.random() < faults.errorRate) {
    throw new VllmError(
      500,
      'The simulated engine failed this request (fault injection: errorRate).',
    )
  }
  const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${context.newId()}`
  const created = Math.floor(Date.now() / 1000)
  const promptTokens = request.promptTokenIds.length
  const runtime = context.runtime()
  const writer = createChunkWriter(kind, id, created, servedAs)
  const stallAfter = faults.stallAfterTokens
  const choices = planChoices(context, request, id)
  let cachedTokens = 0
  let generated = 0
  let done = false
  // Modelled times, for the x-kinference-sim-* headers of non-streamed answers.
  let arrivalMs = 0
  let startMs: number | null = null
  let firstTokenMs: number | null = null
  const totals = () =>
    usage(promptTokens, generated, config.enablePromptTokensDetails ? cachedTokens : null)

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
  const finishWhole = (endMs: number) => {
    if (request.stream) {
      finish((request.includeUsage ? writer.usage(totals()) : '') + writer.done())
      return
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      ...headers,
      ...modelledTimes(arrivalMs, startMs ?? arrivalMs, firstTokenMs ?? endMs, endMs),
    })
    const finished = choices.map((c) => ({ text: c.text.join(''), finish: c.finished ?? 'stop' }))
    finish(JSON.stringify(completionBody(kind, id, created, servedAs, finished, totals())))
  }
  const onToken = (choice: Choice, output: TokenOutput, virtualMs: number) => {
    generated++
    choice.generated++
    if (firstTokenMs === null) {
      firstTokenMs = virtualMs
      const requestId = headers['x-request-id'] ?? id
      context.timings.record({ requestId, ttftMs: performance.now() - receivedAtMs })
    }
    const piece = choice.plan.pieces[output.index] ?? ''
    if (output.finished) choice.finished = output.finished
    if (!request.stream) choice.text.push(piece)
    // A stalled stream keeps its connection and sends nothing more (fault injection).
    else if (stallAfter !== null && output.index >= stallAfter) return
    else {
      // vLLM's continuous usage has the counts only, never prompt_tokens_details.
      const running = request.continuousUsage ? usage(promptTokens, generated, null) : null
      const role = output.index === 0 ? writer.role(choice.index) : ''
      res.write(role + writer.token(piece, output.finished, running, choice.index))
    }
    if (choices.every((c) => c.finished !== null)) finishWhole(virtualMs)
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
    if (!done) for (const choice of choices) runtime.abort(choice.engineId)
  })
  for (const choice of choices) {
    const arrival = runtime.submit(
      {
        id: choice.engineId,
        promptTokenIds: request.promptTokenIds,
        outputTokenIds: choice.plan.tokenIds,
        finishReason: choice.plan.finishReason,
        loraName,
        cacheSalt: request.cacheSalt,
        multimodal: request.multimodal,
        maxTokens: request.maxTokens,
      },
      {
        onStart: (numCachedTokens, virtualMs) => {
          // vLLM reports the first sequence's cached prompt tokens for the request.
          if (startMs === null) {
            cachedTokens = numCachedTokens
            startMs = virtualMs
          }
        },
        onToken: (output, virtualMs) => onToken(choice, output, virtualMs),
      },
      // Each of n sequences is a request of its own to the balancer, as vLLM's children are.
      requestedRank ?? runtime.pickRank(),
    )
    if (choice.index === 0) arrivalMs = arrival
  }
}

/**
 * The LoRA adapter a request runs under: its model when that names one of the pod's
 * adapters, as vLLM's `_maybe_get_adapters` looks the model up among its LoRA requests
 * (vllm/entrypoints/openai/engine/serving.py). The answer then names the adapter as its
 * model (`OpenAIServingModels.model_name`), and the engine hashes its blocks with it.
 */
function loraAdapterOf(config: SimPodConfig, body: unknown): string | null {
  const model = (body as { model?: unknown } | null)?.model
  return typeof model === 'string' && config.loraAdapters.includes(model) ? model : null
}

/** Each choice's output, planned on its own; a single choice runs under the request's id. */
function planChoices(context: SimPodContext, request: GenerationRequest, id: string): Choice[] {
  return Array.from({ length: request.n }, (_, index) => ({
    index,
    engineId: request.n === 1 ? id : `${index}_${id}`,
    plan: context.planOutput(request),
    text: [],
    generated: 0,
    finished: null,
  }))
}

/**
 * Non-standard headers with the request's times in modelled milliseconds (not scaled
 * wall time), so tests and benchmarks can compare what the GPU model predicts:
 * x-kinference-sim-queue-ms, -ttft-ms and -e2e-ms. Named under simHeaderPrefix, so an edge
 * hides them from tenants as it hides the decision headers.
 */
function modelledTimes(arrivalMs: number, startMs: number, firstTokenMs: number, endMs: number) {
  const ms = (value: number) => value.toFixed(3)
  return {
    [`${simHeaderPrefix}queue-ms`]: ms(startMs - arrivalMs),
    [`${simHeaderPrefix}ttft-ms`]: ms(firstTokenMs - arrivalMs),
    [`${simHeaderPrefix}e2e-ms`]: ms(endMs - arrivalMs),
  }
}
