/** How much a log line matters; a sink drops lines below its level. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export const logLevels = ['debug', 'info', 'warn', 'error'] as const satisfies readonly LogLevel[]

/**
 * What a log line says besides its message: its level (info when absent), the request it
 * is about (`request_id`), and any other plain fields. A sink (control-plane/logging)
 * writes them as one JSON object per line.
 */
export type LogFields = {
  level?: LogLevel
  request_id?: string
  trace_id?: string
  [field: string]: string | number | boolean | null | undefined
}

/**
 * The log every component is handed: a message and its fields. A plain `(line) => void`
 * is one (what tests pass to collect lines).
 */
export type Log = (message: string, fields?: LogFields) => void

/** A log whose lines all carry `fields` (a request's id, a component's name). */
export function logWith(log: Log, fields: LogFields): Log {
  return (message, more) => log(message, { ...fields, ...more })
}
