const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
const months = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
]

const pad = (value: number, width = 2) => String(value).padStart(width, '0')

/**
 * Python's `datetime.strftime` in the C locale, for the UTC time `epochMs`: what
 * transformers' `strftime_now` prints on a pod whose clock is UTC (the usual container
 * setting). Directives it does not know are printed as they are, as glibc does.
 */
export function pythonStrftime(epochMs: number, format: string): string {
  const date = new Date(epochMs)
  const year = date.getUTCFullYear()
  const hour = date.getUTCHours()
  const startOfYear = Date.UTC(year, 0, 1)
  const dayOfYear = Math.floor((epochMs - startOfYear) / 86_400_000) + 1
  const values: Record<string, () => string> = {
    a: () => (days[date.getUTCDay()] as string).slice(0, 3),
    A: () => days[date.getUTCDay()] as string,
    b: () => (months[date.getUTCMonth()] as string).slice(0, 3),
    h: () => (months[date.getUTCMonth()] as string).slice(0, 3),
    B: () => months[date.getUTCMonth()] as string,
    d: () => pad(date.getUTCDate()),
    e: () => String(date.getUTCDate()).padStart(2, ' '),
    m: () => pad(date.getUTCMonth() + 1),
    y: () => pad(year % 100),
    Y: () => String(year),
    H: () => pad(hour),
    I: () => pad(hour % 12 === 0 ? 12 : hour % 12),
    p: () => (hour < 12 ? 'AM' : 'PM'),
    M: () => pad(date.getUTCMinutes()),
    S: () => pad(date.getUTCSeconds()),
    f: () => pad(date.getUTCMilliseconds() * 1000, 6),
    j: () => pad(dayOfYear, 3),
    w: () => String(date.getUTCDay()),
    u: () => String(date.getUTCDay() === 0 ? 7 : date.getUTCDay()),
    z: () => '',
    Z: () => '',
    F: () => `${year}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`,
    T: () => `${pad(hour)}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`,
    '%': () => '%',
  }
  return format.replace(/%(.)/gsu, (directive, letter: string) => values[letter]?.() ?? directive)
}
