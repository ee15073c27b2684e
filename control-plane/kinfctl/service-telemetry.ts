import { KinfError } from '../../shared/errors/kinf-error.ts'
import { createJsonLog } from '../../shared/logging/json-log.ts'
import type { Log } from '../../shared/logging/log.ts'
import { logLevelOfEnv } from '../logging/log-level-env.ts'
import { type RunningTracing, startTracing } from '../tracing/start-tracing.ts'
import { type CliIo, UsageError } from './cli-io.ts'
import { readKinfctlVersion } from './commands/version.ts'

/**
 * A service's log: JSON lines on stderr at KINFERENCE_LOG_LEVEL (info by default). A value
 * that is not a level is a usage error, before anything starts.
 */
export function serviceLog(io: CliIo, service: string): Log {
  return createJsonLog({
    service,
    write: (line) => io.stderr(line),
    nowMs: Date.now,
    level: usage(() => logLevelOfEnv(io.env)),
  })
}

/**
 * A service's tracing, as the standard OTEL_* variables say (off unless an OTLP endpoint is
 * set: docs/tracing.md); a variable that cannot be used is a usage error.
 */
export async function serviceTracing(io: CliIo, serviceName: string): Promise<RunningTracing> {
  const { version } = await readKinfctlVersion()
  return usage(() => startTracing(io.env, { serviceName, serviceVersion: version }))
}

function usage<T>(read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (KinfError.isInstance(error) && error.code === 'invalid_config')
      throw new UsageError(error.message)
    throw error
  }
}
