import { describe, expect, it } from 'vitest'
import { floatToGoString, pythonFloatRepr } from '../../../shared/metrics/float-to-go-string.ts'

// Expected strings printed by CPython 3 (`repr(v)`) and by prometheus_client's
// floatToGoString for the same doubles.
const cases: [value: number, repr: string, goString: string][] = [
  [0, '0.0', '0.0'],
  [-0, '-0.0', '-0.0'],
  [1, '1.0', '1.0'],
  [0.25, '0.25', '0.25'],
  [0.1 + 0.2, '0.30000000000000004', '0.30000000000000004'],
  [1e-4, '0.0001', '0.0001'],
  [1e-5, '1e-05', '1e-05'],
  [123456.5, '123456.5', '123456.5'],
  [999999, '999999.0', '999999.0'],
  [1e6, '1000000.0', '1e+06'],
  [1234567, '1234567.0', '1.234567e+06'],
  [1000000.5, '1000000.5', '1.0000005e+06'],
  [12345678.9, '12345678.9', '1.23456789e+07'],
  [1786910601.1177013, '1786910601.1177013', '1.7869106011177013e+09'],
  [1e10, '10000000000.0', '1e+010'],
  [10931263819, '10931263819.0', '1.0931263819e+010'],
  [1e16, '1e+16', '1e+16'],
  [1.5e16, '1.5e+16', '1.5e+16'],
  [-1e6, '-1000000.0', '-1000000.0'],
  [-1234567, '-1234567.0', '-1234567.0'],
  [-2.5e-7, '-2.5e-07', '-2.5e-07'],
  [7680, '7680.0', '7680.0'],
  [1e300, '1e+300', '1e+300'],
  [Number.POSITIVE_INFINITY, 'inf', '+Inf'],
  [Number.NEGATIVE_INFINITY, '-inf', '-Inf'],
  [Number.NaN, 'nan', 'NaN'],
]

describe('pythonFloatRepr and floatToGoString', () => {
  it.each(cases)('%s is %s in Python and %s on /metrics', (value, repr, goString) => {
    expect(pythonFloatRepr(value)).toBe(repr)
    expect(floatToGoString(value)).toBe(goString)
  })

  it('round-trips: the text reads back as the same double', () => {
    for (let i = 0; i < 2000; i++) {
      const value = (Math.sin(i) * 10 ** ((i % 40) - 20)) / 3
      expect(Number(pythonFloatRepr(value))).toBe(value)
      expect(Number(floatToGoString(value).replace(/e\+0(\d)/, 'e+$1'))).toBe(value)
    }
  })
})
