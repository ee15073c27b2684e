import { performance } from 'node:perf_hooks'
import { compileCustomPatterns } from '../../../shared/pii/custom-pii-patterns.ts'
import { detectPii } from '../../../shared/pii/detect-pii.ts'

/**
 * Time of one detectPii call on 32 KB prompts: a realistic mix (prose, code, a log
 * excerpt, figures, a little PII) and adversarial ones. Usage: npx node control-plane/lab/pii-corpus/bench-pii.ts
 */
const size = 32 * 1024

const prose =
  'The quarterly report shows revenue of $1,234,567 (up 12.5% on 2023-Q4), with 3 new regions ' +
  'opened on 2024-05-12. Please summarise the risks listed in section 4.2 and compare version ' +
  '1.18.3 with 2.0.0-rc.1 of the client library. '
const code =
  'function retry(fn, attempts = 3) {\n  for (let i = 0; i < attempts; i++) {\n' +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a sample of source code, placeholders included.
  '    try { return fn() } catch (e) { console.log(`attempt ${i}: ${e}`) }\n  }\n}\n'
const log =
  '2024-05-12T10:21:33.512Z INFO request id=7f3a2c91 took 182ms status=200 bytes=53211 ' +
  'upstream=10.0.3.17:8000 path=/v1/chat/completions\n'
const pii =
  'Customer Jane Roe (jane.roe@example.com, +44 20 7946 0958) paid with 4111 1111 1111 1111. '

function fill(parts: readonly string[]): string {
  let text = ''
  for (let i = 0; text.length < size; i++) text += parts[i % parts.length]
  return text.slice(0, size)
}

const prompts: Record<string, string> = {
  'mixed prose, code, logs, some PII': fill([prose, code, prose, log, prose, pii]),
  'prose only': fill([prose]),
  'digits only': '7'.repeat(size),
  'digit groups': fill(['12 345 6789 ']),
  'dotted numbers': fill(['1.2.3.4.5.6.7.8.9.']),
  'hex and colons': fill(['ab:cd:ef:']),
  'base64 blob': fill(['eyJhbGciOiJIUzI1NiJ9QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo']),
  'at signs and words': fill(['user@ name@host a@b.c ']),
}

const custom = compileCustomPatterns([
  { name: 'patient-record-number', regex: '\\bPRN-\\d{7}\\b', label: 'pii:patient-record' },
])

/** Wall time of each call, sorted, and the mean CPU time (less disturbed by a busy machine). */
function measure(
  text: string,
  options: Parameters<typeof detectPii>[1],
): { wall: number[]; cpuMs: number } {
  for (let i = 0; i < 200; i++) detectPii(text, options) // warm up the JIT
  const wall: number[] = []
  const cpu = process.cpuUsage()
  for (let i = 0; i < 1000; i++) {
    const start = performance.now()
    detectPii(text, options)
    wall.push(performance.now() - start)
  }
  const used = process.cpuUsage(cpu)
  return { wall: wall.sort((a, b) => a - b), cpuMs: (used.user + used.system) / 1000 / 1000 }
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN

process.stdout.write('detectPii on 32 KB prompts, 1000 calls each after warm-up (ms per call)\n\n')
process.stdout.write(
  '| prompt | wall p50 | wall p99 | mean CPU | labels |\n|---|---:|---:|---:|---|\n',
)
for (const [name, text] of Object.entries(prompts)) {
  const { wall, cpuMs } = measure(text, { custom })
  const labels = detectPii(text, { custom }).labels.join(' ') || '-'
  process.stdout.write(
    `| ${name} | ${quantile(wall, 0.5).toFixed(3)} | ${quantile(wall, 0.99).toFixed(3)} | ${cpuMs.toFixed(3)} | ${labels} |\n`,
  )
}
