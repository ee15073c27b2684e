import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from 'openai'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { upstreamErrorBody } from '../../../shared/openai/upstream-error-body.ts'

/** OpenAI's error body, nothing more: `code` a string or null, never vLLM's number. */
const OpenAiShape = z.strictObject({
  error: z.strictObject({
    message: z.string().min(1),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
  }),
})

/** The class the official openai client raises for this answer. */
function clientError(status: number, body: unknown) {
  return APIError.generate(status, body as object, undefined, new Headers())
}

// Bodies as vLLM writes them (docs/vllm-wire.md §4.1): create_error_response's
// {"error": ErrorInfo} with the status as an integer code, the handler of FastAPI's
// RequestValidationError ("Bad Request"), the older flat ErrorResponse, the --api-key guard.
const recorded = {
  temperature: JSON.stringify({
    error: {
      message: 'temperature must be non-negative, got -1.0. (parameter=temperature, value=-1.0)',
      type: 'BadRequestError',
      param: 'temperature',
      code: 400,
    },
  }),
  streamOptions: JSON.stringify({
    error: {
      message:
        "1 validation error:\n  {'type': 'value_error', 'loc': ('body',), 'msg': 'Value error, Stream options can only be defined when `stream=True`. (parameter=stream_options)'}",
      type: 'Bad Request',
      param: 'stream_options',
      code: 400,
    },
  }),
  flat: JSON.stringify({
    object: 'error',
    message: 'min_tokens must be less than or equal to max_tokens=4, got 8.',
    type: 'BadRequestError',
    param: null,
    code: 400,
  }),
  model: JSON.stringify({
    error: {
      message: 'The model `gpt-4` does not exist.',
      type: 'NotFoundError',
      param: 'model',
      code: 404,
    },
  }),
  apiKey: JSON.stringify({ error: 'Unauthorized' }),
  context: JSON.stringify({
    error: {
      message:
        "This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages. (parameter=input_tokens, value=40000)",
      type: 'BadRequestError',
      param: 'input_tokens',
      code: 400,
    },
  }),
  engine: JSON.stringify({
    error: {
      message:
        'CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 44.53 GiB total capacity) in /opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py',
      type: 'InternalServerError',
      param: null,
      code: 500,
    },
  }),
  notImplemented: JSON.stringify({
    error: {
      message: 'Beam search is not supported by this server.',
      type: 'NotImplementedError',
      param: null,
      code: 501,
    },
  }),
}

describe('an upstream error answer, in OpenAI’s shape', () => {
  it.each([
    ['a sampling error', 400, recorded.temperature, BadRequestError, 'temperature'],
    ['a validation error', 400, recorded.streamOptions, BadRequestError, 'stream_options'],
    ['the older flat shape', 400, recorded.flat, BadRequestError, null],
    ['an unknown model', 404, recorded.model, NotFoundError, 'model'],
    ['the --api-key guard', 401, recorded.apiKey, AuthenticationError, null],
    ['a 5xx', 500, recorded.engine, InternalServerError, null],
    ['a 501', 501, recorded.notImplemented, InternalServerError, null],
  ])('keeps %s’s class, param and no vLLM fields', (_, status, text, errorClass, param) => {
    const answer = upstreamErrorBody(status, text)
    expect(answer.status).toBe(status)
    const body = OpenAiShape.parse(answer.body)
    expect(body.error.param).toBe(param)
    expect(clientError(answer.status, answer.body)).toBeInstanceOf(errorClass)
  })

  it('gives each status OpenAI’s type and a string code', () => {
    const cases: [number, string, new (...args: never[]) => APIError][] = [
      [400, 'invalid_request_error', BadRequestError],
      [401, 'authentication_error', AuthenticationError],
      [403, 'permission_error', PermissionDeniedError],
      [404, 'invalid_request_error', NotFoundError],
      [409, 'invalid_request_error', ConflictError],
      [413, 'invalid_request_error', APIError],
      [422, 'invalid_request_error', UnprocessableEntityError],
      [429, 'rate_limit_error', RateLimitError],
      [500, 'server_error', InternalServerError],
      [502, 'server_error', InternalServerError],
      [503, 'server_error', InternalServerError],
      [504, 'server_error', InternalServerError],
    ]
    for (const [status, type, errorClass] of cases) {
      const answer = upstreamErrorBody(status, '{"error":{"message":"m","type":"X","code":1}}')
      const body = OpenAiShape.parse(answer.body)
      expect(body.error.type, String(status)).toBe(type)
      expect(body.error.code, String(status)).toEqual(expect.any(String))
      expect(clientError(status, answer.body), String(status)).toBeInstanceOf(errorClass)
    }
  })

  it('keeps a client error’s message and a feature’s, and hides a server error’s', () => {
    const sampling = upstreamErrorBody(400, recorded.temperature).body.error
    expect(sampling.message).toMatch(/^temperature must be non-negative, got -1\.0\./)
    expect(sampling).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' })
    expect(upstreamErrorBody(400, recorded.flat).body.error.message).toContain('min_tokens')
    expect(upstreamErrorBody(501, recorded.notImplemented).body.error.message).toBe(
      'Beam search is not supported by this server.',
    )
    const engine = upstreamErrorBody(500, recorded.engine).body.error
    expect(engine.message).not.toMatch(/CUDA|python|\.py/)
    expect(engine).toMatchObject({ type: 'server_error', code: 'upstream_error' })
  })

  it('names the two errors OpenAI has codes for', () => {
    expect(upstreamErrorBody(404, recorded.model).body.error.code).toBe('model_not_found')
    expect(upstreamErrorBody(400, recorded.context).body.error.code).toBe('context_length_exceeded')
    const own = JSON.stringify({
      error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    })
    expect(upstreamErrorBody(429, own).body.error.code).toBe('rate_limit_exceeded')
    const odd = JSON.stringify({ error: { message: 'x', code: 'Not A Code!' } })
    expect(upstreamErrorBody(400, odd).body.error.code).toBe('invalid_request')
  })

  it('answers bodies that are not JSON errors for their status alone', () => {
    const html = '<html><head><title>502 Bad Gateway</title></head><body>nginx/1.25</body></html>'
    const gateway = upstreamErrorBody(502, html)
    expect(gateway.status).toBe(502)
    expect(OpenAiShape.parse(gateway.body).error.message).not.toMatch(/nginx|html/)
    const headers = upstreamErrorBody(431, 'Request Header Fields Too Large')
    expect(OpenAiShape.parse(headers.body).error).toMatchObject({
      type: 'invalid_request_error',
      message: 'the model server refused the request (HTTP 431)',
    })
    for (const text of ['', '[1,2]', '{"error":', 'null', '{"detail":[{"loc":["body"]}]}'])
      expect(OpenAiShape.parse(upstreamErrorBody(422, text).body).error.type).toBe(
        'invalid_request_error',
      )
    expect(upstreamErrorBody(404, '{"detail":"Not Found"}').body.error.message).toBe('Not Found')
  })

  it('answers a status that is not an error as a 502', () => {
    for (const status of [200, 302, 0, 600, Number.NaN]) {
      const answer = upstreamErrorBody(status, '{"error":{"message":"moved"}}')
      expect(answer.status).toBe(502)
      expect(answer.body.error.type).toBe('server_error')
    }
  })

  it('cuts a message before its stack trace, and caps it', () => {
    const python = JSON.stringify({
      error: {
        message:
          'bad input\nTraceback (most recent call last):\n  File "/vllm/x.py", line 3, in f\nValueError',
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    })
    expect(upstreamErrorBody(400, python).body.error.message).toBe('bad input')
    const node = JSON.stringify({
      message: 'nope\n    at handler (/srv/app.js:10:5)',
      type: 'BadRequestError',
      code: 400,
    })
    expect(upstreamErrorBody(400, node).body.error.message).toBe('nope')
    const long = JSON.stringify({ error: { message: 'x'.repeat(50_000), code: 400 } })
    expect(upstreamErrorBody(400, long).body.error.message.length).toBeLessThanOrEqual(1_001)
  })
})
