/**
 * CPython's `repr(float)`: the shortest digits that read back to the same double (which is
 * what JavaScript's `toExponential()` finds too), laid out the CPython way: exponent form
 * when the decimal exponent is below -4 or 16 and above, with a sign and at least two
 * exponent digits (`1e-05`, `1.5e+16`); positional otherwise, with `.0` on integral values.
 */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return 'nan'
  if (value === Number.POSITIVE_INFINITY) return 'inf'
  if (value === Number.NEGATIVE_INFINITY) return '-inf'
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0'
  // Integers below 1e16 print positionally in both languages; this is the common case.
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`
  const sign = value < 0 ? '-' : ''
  const [mantissa = '', exponentText = '0'] = Math.abs(value).toExponential().split('e')
  const digits = mantissa.replace('.', '')
  const exponent = Number(exponentText)
  if (exponent < -4 || exponent >= 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
    const magnitude = Math.abs(exponent)
    return `${sign}${head}e${exponent < 0 ? '-' : '+'}${magnitude < 10 ? '0' : ''}${magnitude}`
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`
  const whole = exponent + 1
  if (digits.length <= whole) return `${sign}${digits}${'0'.repeat(whole - digits.length)}.0`
  return `${sign}${digits.slice(0, whole)}.${digits.slice(whole)}`
}

/**
 * prometheus_client's `floatToGoString`, which writes every sample value and every `le`
 * bound of vLLM's `/metrics`: `+Inf`, `-Inf` and `NaN`, else CPython's repr, switched to
 * exponent form for positive values with seven or more integer digits. The exponent keeps
 * prometheus_client's literal `e+0` prefix, so 1e6 is `1e+06` and 1e10 is `1e+010`.
 */
export function floatToGoString(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  if (Number.isNaN(value)) return 'NaN'
  const repr = pythonFloatRepr(value)
  const dot = repr.indexOf('.')
  if (value > 0 && dot > 6) {
    const mantissa = `${repr[0]}.${repr.slice(1, dot)}${repr.slice(dot + 1)}`.replace(/[0.]+$/, '')
    return `${mantissa}e+0${dot - 1}`
  }
  return repr
}
