import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { parseOptions } from '../../../shared/config/parse-options.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

const Options = z.strictObject({ size: z.int().positive().default(4), name: z.string().optional() })

describe('parseOptions', () => {
  it('gives the defaulted options', () => {
    expect(parseOptions(Options, {}, 'thing')).toEqual({ size: 4 })
    expect(parseOptions(Options, { size: 9, name: 'a' }, 'thing')).toEqual({ size: 9, name: 'a' })
  })

  it('names the subject and the first bad option in an invalid_config error', () => {
    const error = (() => {
      try {
        parseOptions(Options, { size: -1 }, 'thing')
      } catch (caught) {
        return caught
      }
      return null
    })()
    expect(KinfError.isInstance(error) && error.code).toBe('invalid_config')
    expect(String(error)).toMatch(/thing: size /)
    expect(() => parseOptions(Options, 'nope', 'thing')).toThrow(/^thing: /)
  })
})
