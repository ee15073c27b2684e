import { KinfError } from '../../shared/errors/kinf-error.ts'

/** vLLM's error body: `{"error": {message, type, param, code}}` with code = HTTP status. */
export interface VllmErrorBody {
  error: { message: string; type: string; param: string | null; code: number }
}

const typeByStatus: Record<number, string> = {
  400: 'BadRequestError',
  404: 'NotFoundError',
  413: 'BadRequestError',
  500: 'InternalServerError',
  503: 'ServiceUnavailableError',
}

/** An error a simulated pod answers with, in vLLM's shape. */
export class VllmError extends KinfError {
  constructor(status: number, message: string, param: string | null = null) {
    super(status >= 500 ? 'upstream_error' : 'invalid_request', message, { status, param })
  }

  toBody(): VllmErrorBody {
    return {
      error: {
        message: this.message,
        type: typeByStatus[this.status] ?? 'BadRequestError',
        param: this.param,
        code: this.status,
      },
    }
  }
}

export const badRequest = (message: string, param: string | null = null) =>
  new VllmError(400, message, param)
