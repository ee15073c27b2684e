import { KinfError } from '../../shared/errors/kinf-error.ts'
import { type LogLevel, logLevels } from '../../shared/logging/log.ts'

/** The variable every service's entry point reads its log level from. */
export const logLevelVariable = 'KINFERENCE_LOG_LEVEL'

/**
 * The level a service logs at, from KINFERENCE_LOG_LEVEL: `info` when unset or empty (a
 * chart leaving the value blank means the default). Anything else not a level is an
 * `invalid_config` KinfError naming the variable and the levels; a kinfctl command turns
 * it into its usage error.
 */
export function logLevelOfEnv(env: Readonly<Record<string, string | undefined>>): LogLevel {
  const value = env[logLevelVariable]?.trim() ?? ''
  if (value === '') return 'info'
  const level = logLevels.find((candidate) => candidate === value)
  if (level) return level
  throw new KinfError(
    'invalid_config',
    `${logLevelVariable} must be one of ${logLevels.join(', ')} (got ${JSON.stringify(value)})`,
    { param: logLevelVariable },
  )
}
