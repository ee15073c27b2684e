import { describe, expect, it } from 'vitest'
import { createJsonLog } from '../../../shared/logging/json-log.ts'
import type { LogLevel } from '../../../shared/logging/log.ts'

/** A JSON log of service `test` at `level`, the clock at 2026-01-02T03:04:05.678Z, and what it wrote. */
function jsonLog(level?: LogLevel) {
  const written: string[] = []
  const log = createJsonLog({
    service: 'test',
    write: (line) => written.push(line),
    nowMs: () => Date.UTC(2026, 0, 2, 3, 4, 5, 678),
    ...(level !== undefined && { level }),
  })
  const parsed = () => written.map((line) => JSON.parse(line) as Record<string, unknown>)
  return { log, written, parsed }
}

describe('createJsonLog', () => {
  it('writes each message as one JSON object on one line: time, level, service, msg', () => {
    const { log, written, parsed } = jsonLog()
    log('first')
    log('second\nwith a newline "and quotes"')
    expect(written).toHaveLength(2)
    for (const line of written) {
      expect(line.endsWith('\n')).toBe(true)
      expect(line.slice(0, -1)).not.toContain('\n')
    }
    expect(parsed()).toEqual([
      { time: '2026-01-02T03:04:05.678Z', level: 'info', service: 'test', msg: 'first' },
      {
        time: '2026-01-02T03:04:05.678Z',
        level: 'info',
        service: 'test',
        msg: 'second\nwith a newline "and quotes"',
      },
    ])
    expect(Object.keys(parsed()[0] ?? {})).toEqual(['time', 'level', 'service', 'msg'])
  })

  it('carries the line’s level and its fields after the four', () => {
    const { log, parsed } = jsonLog()
    log('status write conflicted', {
      level: 'warn',
      request_id: 'req-1',
      kind: 'InferencePool',
      attempts: 3,
      retried: true,
      previous: null,
    })
    expect(parsed()).toEqual([
      {
        time: '2026-01-02T03:04:05.678Z',
        level: 'warn',
        service: 'test',
        msg: 'status write conflicted',
        request_id: 'req-1',
        kind: 'InferencePool',
        attempts: 3,
        retried: true,
        previous: null,
      },
    ])
  })

  it('leaves fields that are undefined out', () => {
    const { log, written } = jsonLog()
    log('partial', { request_id: undefined, trace_id: 'abc', name: undefined })
    expect(JSON.parse(written[0] ?? '')).toEqual({
      time: '2026-01-02T03:04:05.678Z',
      level: 'info',
      service: 'test',
      msg: 'partial',
      trace_id: 'abc',
    })
    expect(written[0]).not.toContain('request_id')
    expect(written[0]).not.toContain('name')
  })

  it('lets no field replace time, service or msg', () => {
    const { log, parsed } = jsonLog()
    log('the real message', {
      level: 'error',
      time: 'yesterday',
      service: 'impostor',
      msg: 'a forged message',
    })
    expect(parsed()).toEqual([
      {
        time: '2026-01-02T03:04:05.678Z',
        level: 'error',
        service: 'test',
        msg: 'the real message',
      },
    ])
  })

  it('drops lines below its level (info by default), keeps those at it and above', () => {
    const levels: LogLevel[] = ['debug', 'info', 'warn', 'error']
    const kept = (floor?: LogLevel) => {
      const { log, parsed } = jsonLog(floor)
      for (const level of levels) log(`at ${level}`, { level })
      log('no level given')
      return parsed().map((line) => line.msg)
    }
    expect(kept()).toEqual(['at info', 'at warn', 'at error', 'no level given'])
    expect(kept('debug')).toEqual(['at debug', 'at info', 'at warn', 'at error', 'no level given'])
    expect(kept('warn')).toEqual(['at warn', 'at error'])
    expect(kept('error')).toEqual(['at error'])
  })

  it('reads the clock for each line', () => {
    let now = Date.UTC(2026, 0, 1)
    const written: string[] = []
    const log = createJsonLog({
      service: 'test',
      write: (line) => written.push(line),
      nowMs: () => now,
    })
    log('one')
    now += 1_500
    log('two')
    expect(written.map((line) => JSON.parse(line).time)).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:01.500Z',
    ])
  })
})
