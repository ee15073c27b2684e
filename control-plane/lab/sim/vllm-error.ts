import { KinfError } from '../../../shared/errors/kinf-error.ts'

/** vLLM's error body: `{"error": {message, type, param, code}}` with code = HTTP status. */
export interface VllmErrorBody {
  error: { message: string; type: string; param: string | null; code: number }
}

/** create_error_response's types (vllm/entrypoints/serve/utils/error_response.py). */
const typeByStatus: Record<number, string> = {
  400: 'BadRequestError',
  404: 'NotFoundError',
  413: 'BadRequestError',
  500: 'InternalServerError',
  501: 'NotImplementedError',
  503: 'ServiceUnavailableError',
}

/**
 * An error a simulated pod answers with, in vLLM's shape. `type` is vLLM's own: the
 * exception's class as create_error_response names it, or the HTTP status phrase ("Bad
 * Request") for what FastAPI refuses before vLLM's code runs (docs/vllm-wire.md §4.1).
 */
export class VllmError extends KinfError {
  readonly type: string

  constructor(status: number, message: string, param: string | null = null, type?: string) {
    super(status >= 500 ? 'upstream_error' : 'invalid_request', message, { status, param })
    this.type = type ?? typeByStatus[status] ?? 'BadRequestError'
  }

  toBody(): VllmErrorBody {
    return {
      error: { message: this.message, type: this.type, param: this.param, code: this.status },
    }
  }
}

export const badRequest = (message: string, param: string | null = null) =>
  new VllmError(400, message, param)

/**
 * A VLLMValidationError raised by SamplingParams or the serving code: its str() ends with
 * the parameter and value it names, and the parameter becomes the error's param.
 */
export function samplingError(message: string, parameter?: string, value?: string): VllmError {
  const extras = [
    ...(parameter === undefined ? [] : [`parameter=${parameter}`]),
    ...(value === undefined ? [] : [`value=${value}`]),
  ]
  const text = extras.length > 0 ? `${message} (${extras.join(', ')})` : message
  return new VllmError(400, text, parameter ?? null)
}

/**
 * What vLLM's handler of FastAPI's RequestValidationError answers: the errors listed as
 * pydantic reports them (without the echoed input), param the field of the first one.
 */
export function validationError(
  errors: { loc: string[]; msg: string; type?: string }[],
  param: string | null,
): VllmError {
  const label = errors.length === 1 ? 'error' : 'errors'
  const lines = errors.map(
    (e) =>
      `  {'type': '${e.type ?? 'value_error'}', 'loc': ${pythonTuple(['body', ...e.loc])}, 'msg': ${JSON.stringify(e.msg)}}`,
  )
  return new VllmError(
    400,
    `${errors.length} validation ${label}:\n${lines.join('\n')}`,
    param,
    'Bad Request',
  )
}

/** FastAPI's answer to a body its JSON parser gave up on (RecursionError and the like). */
export const unparsableBody = () =>
  new VllmError(400, 'There was an error parsing the body', null, 'Bad Request')

/** A pydantic error location as Python prints the tuple: ('body', 'messages', 0). */
function pythonTuple(loc: string[]): string {
  const items = loc.map((part) => (/^\d+$/.test(part) ? part : `'${part}'`))
  return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`
}

/** A number as Python prints a float (-1.0, 1.5). */
export function pythonFloat(value: number): string {
  return Number.isInteger(value) && Math.abs(value) < 1e16 ? value.toFixed(1) : String(value)
}
