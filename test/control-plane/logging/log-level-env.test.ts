import { describe, expect, it } from 'vitest'
import { logLevelOfEnv } from '../../../control-plane/logging/log-level-env.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

describe('logLevelOfEnv', () => {
  it('is info when KINFERENCE_LOG_LEVEL is unset or empty', () => {
    expect(logLevelOfEnv({})).toBe('info')
    expect(logLevelOfEnv({ KINFERENCE_LOG_LEVEL: undefined })).toBe('info')
    expect(logLevelOfEnv({ KINFERENCE_LOG_LEVEL: '' })).toBe('info')
    expect(logLevelOfEnv({ KINFERENCE_LOG_LEVEL: '  ' })).toBe('info')
  })

  it('is each level the variable names', () => {
    for (const level of ['debug', 'info', 'warn', 'error'] as const)
      expect(logLevelOfEnv({ KINFERENCE_LOG_LEVEL: level })).toBe(level)
    expect(logLevelOfEnv({ KINFERENCE_LOG_LEVEL: ' warn\n' })).toBe('warn')
  })

  it('reads only its own variable', () => {
    expect(logLevelOfEnv({ LOG_LEVEL: 'error', KINFERENCE_LOG: 'debug' })).toBe('info')
  })

  it('refuses anything else with an invalid_config error naming the variable and the levels', () => {
    for (const value of ['verbose', 'WARN', 'warning', '3', 'info,debug']) {
      let thrown: unknown
      try {
        logLevelOfEnv({ KINFERENCE_LOG_LEVEL: value })
      } catch (error) {
        thrown = error
      }
      expect(KinfError.isInstance(thrown)).toBe(true)
      const error = thrown as KinfError
      expect(error.code).toBe('invalid_config')
      expect(error.param).toBe('KINFERENCE_LOG_LEVEL')
      expect(error.message).toBe(
        `KINFERENCE_LOG_LEVEL must be one of debug, info, warn, error (got ${JSON.stringify(value)})`,
      )
    }
  })
})
