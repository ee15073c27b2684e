import { createServer, type Server, type ServerResponse } from 'node:http'
import { z } from 'zod'
import { prometheusTextContentType } from '../../../shared/metrics/create-prometheus-registry.ts'
import { ChatMessage } from '../../../shared/openai/chat-completion-request.ts'
import { parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'
import { promptOf } from './generation-request.ts'
import { handleEmbeddings } from './handle-embeddings.ts'
import { handleGeneration } from './handle-generation.ts'
import { readJsonBody } from './read-json-body.ts'
import { type SimFaults, SimFaultsPatch } from './sim-pod-config.ts'
import type { SimPodContext } from './sim-pod-context.ts'
import { badRequest, VllmError } from './vllm-error.ts'

/** Run-time control of a pod, beyond what vLLM has (fault injection, restarts). */
export interface PodAdmin {
  setFaults(patch: SimFaultsPatch): SimFaults
  restart(): Promise<void>
  kill(downForMs: number | null): void
}

/** vLLM's /tokenize: a chat request's messages and template options, or a prompt. */
const TokenizeRequest = z.looseObject({
  model: z.string().optional(),
  prompt: z.string().optional(),
  messages: z.array(ChatMessage).optional(),
  return_token_strs: z.boolean().optional(),
})
const DetokenizeRequest = z.looseObject({
  model: z.string().optional(),
  tokens: z.array(z.int().min(0)),
})
const KillRequest = z.strictObject({
  downForMs: z.number().min(0).max(3_600_000).nullable().default(null),
})

type Handler = (
  context: SimPodContext,
  body: unknown,
  res: ServerResponse,
  headers: Record<string, string>,
  /** When the request arrived (performance.now()), before its body was read. */
  receivedAtMs: number,
) => unknown

/** The HTTP face of a simulated pod: vLLM's OpenAI server routes plus /admin. */
export function createPodHttpServer(context: SimPodContext, admin: PodAdmin): Server {
  const json = (
    res: ServerResponse,
    status: number,
    value: unknown,
    headers: Record<string, string>,
  ) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(value))
  }
  // vLLM registers the completions routes only for the generate runner and the pooling
  // routes only for a pooling one (build_app in vllm/entrypoints/openai/api_server.py):
  // the other runner's paths answer FastAPI's 404.
  const runnerRoutes: Record<string, Handler> =
    context.config.runner === 'pooling'
      ? {
          'POST /v1/embeddings': (ctx, body, res, headers) =>
            handleEmbeddings(ctx, body, res, headers),
        }
      : {
          'POST /v1/chat/completions': (ctx, body, res, headers, receivedAtMs) =>
            handleGeneration(ctx, 'chat', body, res, headers, receivedAtMs),
          'POST /v1/completions': (ctx, body, res, headers, receivedAtMs) =>
            handleGeneration(ctx, 'completion', body, res, headers, receivedAtMs),
        }
  const routes: Record<string, Handler> = {
    ...runnerRoutes,
    'GET /v1/models': (ctx, _body, res, headers) => json(res, 200, modelList(ctx), headers),
    'POST /tokenize': (ctx, body, res, headers) => json(res, 200, tokenize(ctx, body), headers),
    'POST /detokenize': (ctx, body, res, headers) => json(res, 200, detokenize(ctx, body), headers),
    'GET /health': (ctx, _body, res) => health(ctx, res),
    'GET /ping': (ctx, _body, res) => health(ctx, res),
    'POST /ping': (ctx, _body, res) => health(ctx, res),
    'GET /metrics': (ctx, _body, res) => {
      const runtime = ctx.runtime()
      res.writeHead(200, { 'content-type': prometheusTextContentType })
      // vLLM's /metrics also carries prometheus_client's process collector; its start time is
      // what tells a scraper that the process behind the same address was replaced.
      res.end(
        `${runtime.metrics.render()}# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds ${runtime.startedAtSeconds}\n`,
      )
    },
    // vLLM answers 200 whether or not the reset happened (it refuses while blocks are in use).
    'POST /reset_prefix_cache': (ctx, _body, res) => {
      ctx.runtime().resetPrefixCache()
      res.writeHead(200).end()
    },
    'GET /version': (_ctx, _body, res, headers) =>
      json(res, 200, { version: '0.31.0+kinference-sim' }, headers),
    'GET /admin/faults': (ctx, _body, res, headers) => json(res, 200, ctx.faults(), headers),
    // How far the real-time driver fell behind its own clock, and the engine's state.
    'GET /admin/stats': (ctx, _body, res, headers) => {
      const runtime = ctx.runtime()
      json(res, 200, { lag: runtime.driver.lagStats(), engine: runtime.engine.stats }, headers)
    },
    'POST /admin/stats/reset': (ctx, _body, res) => {
      ctx.runtime().driver.resetLagStats()
      res.writeHead(204).end()
    },
    // Each request's wall-clock time to first token here, since the last take (load tests).
    'POST /admin/timings/take': (ctx, _body, res, headers) =>
      json(res, 200, { timings: ctx.timings.take() }, headers),
    'POST /admin/faults': (_ctx, body, res, headers) => {
      const parsed = SimFaultsPatch.safeParse(body)
      if (!parsed.success) throw badRequest(z.prettifyError(parsed.error))
      json(res, 200, admin.setFaults(parsed.data), headers)
    },
    'POST /admin/restart': async (_ctx, _body, res, headers) => {
      await admin.restart()
      json(res, 200, { restarted: true }, headers)
    },
    'POST /admin/kill': (_ctx, body, res, headers) => {
      const parsed = KillRequest.safeParse(body ?? {})
      if (!parsed.success) throw badRequest(z.prettifyError(parsed.error))
      json(res, 202, { killed: true, downForMs: parsed.data.downForMs }, headers)
      res.on('finish', () => admin.kill(parsed.data.downForMs))
    },
  }
  const knownPaths = new Set(Object.keys(routes).map((key) => key.split(' ')[1]))

  return createServer({ keepAliveTimeout: 65_000 }, async (req, res) => {
    const receivedAtMs = performance.now()
    const requestId = req.headers['x-request-id']
    const headers: Record<string, string> = {
      'x-request-id': typeof requestId === 'string' ? requestId : context.newId(),
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    const handler = routes[`${req.method} ${path}`]
    try {
      if (!handler) {
        const [status, detail] = knownPaths.has(path)
          ? [405, 'Method Not Allowed']
          : [404, 'Not Found']
        return json(res, status, { detail }, headers)
      }
      const body = req.method === 'POST' ? await readJsonBody(req) : undefined
      await handler(context, body, res, headers, receivedAtMs)
    } catch (error) {
      const failure =
        error instanceof VllmError
          ? error
          : new VllmError(500, String((error as Error)?.message ?? error))
      if (!res.headersSent) json(res, failure.status, failure.toBody(), headers)
      else res.end()
    }
  })
}

function health(context: SimPodContext, res: ServerResponse): void {
  res.writeHead(context.faults().unhealthy ? 503 : 200).end()
}

function modelList(context: SimPodContext) {
  const { modelName, profile } = context.config
  return {
    object: 'list',
    data: [
      {
        id: modelName,
        object: 'model',
        created: Math.floor(Date.now() / 1000),
        owned_by: 'vllm',
        root: modelName,
        parent: null,
        max_model_len: profile.model.maxModelLen,
        permission: [],
      },
    ],
  }
}

function checkModel(context: SimPodContext, model: string | undefined): void {
  if (model !== undefined && model !== context.config.modelName) {
    throw new VllmError(404, `The model \`${model}\` does not exist.`, 'model')
  }
}

/**
 * vLLM's /tokenize: a chat request's prompt (rendered and tokenized as for generation) or
 * a prompt's ids, with the vocabulary entries of the ids when asked (convert_ids_to_tokens).
 */
function tokenize(context: SimPodContext, body: unknown) {
  const parsed = TokenizeRequest.safeParse(body)
  if (!parsed.success) throw badRequest(z.prettifyError(parsed.error))
  const request = parsed.data
  checkModel(context, request.model)
  const model = context.tokenizer
  if (request.messages === undefined && request.prompt === undefined)
    throw badRequest('Either prompt or messages is required.')
  const kind = request.messages !== undefined ? 'chat' : 'completion'
  const asked = parseOpenAiRequest(kind, body)
  if ('issues' in asked) throw badRequest(asked.issues.message, asked.issues.param)
  const tokens = promptOf(kind, body, model).tokenIds
  return {
    count: tokens.length,
    max_model_len: context.config.profile.model.maxModelLen,
    tokens,
    ...(request.return_token_strs && { token_strs: tokens.map((id) => model.idToToken(id)) }),
  }
}

function detokenize(context: SimPodContext, body: unknown) {
  const parsed = DetokenizeRequest.safeParse(body)
  if (!parsed.success) throw badRequest(z.prettifyError(parsed.error))
  checkModel(context, parsed.data.model)
  const { tokens } = parsed.data
  const outside = tokens.find((id) => id >= context.tokenizer.vocabSize)
  if (outside !== undefined) throw badRequest(`Token id ${outside} is out of vocabulary`, 'tokens')
  return { prompt: context.tokenizer.decode(tokens) }
}
