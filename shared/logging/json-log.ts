import { type Log, type LogFields, type LogLevel, logLevels } from './log.ts'

export interface JsonLogOptions {
  /** The service's name, on every line (`edge`, `scorer`, `controller`). */
  service: string
  /** Where a finished line goes (stderr in the entry points). */
  write: (line: string) => void
  nowMs: () => number
  /** Lines below this level are dropped (KINFERENCE_LOG_LEVEL in the entry points). */
  level?: LogLevel
}

/**
 * A log writing one JSON object per line: `time` (ISO 8601), `level`, `service`, `msg`,
 * then the line's fields (`request_id`, `trace_id`, …), the shape log collectors (Loki,
 * Cloud Logging, CloudWatch) parse without configuration. Fields that are undefined are
 * left out; a field cannot replace time, level, service or msg.
 */
export function createJsonLog(options: JsonLogOptions): Log {
  const floor = logLevels.indexOf(options.level ?? 'info')
  return (message: string, fields?: LogFields) => {
    const level = fields?.level ?? 'info'
    if (logLevels.indexOf(level) < floor) return
    const line: Record<string, unknown> = {
      time: new Date(options.nowMs()).toISOString(),
      level,
      service: options.service,
      msg: message,
    }
    for (const [name, value] of Object.entries(fields ?? {})) {
      if (value !== undefined && !(name in line)) line[name] = value
    }
    options.write(`${JSON.stringify(line)}\n`)
  }
}
