import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { BenchmarkReport } from '../../../control-plane/lab/bench/write-benchmark-reports.ts'
import { runCli } from '../../support/run-cli.ts'

const dir = mkdtempSync(join(tmpdir(), 'kinfctl-bench-trace-'))

function traceFile(name: string, lines: string[]): string {
  const path = join(dir, name)
  writeFileSync(path, `${lines.join('\n')}\n`)
  return path
}

const request = (timestamp: number, input: number, hashIds: number[]) =>
  JSON.stringify({ timestamp, input_length: input, output_length: 4, hash_ids: hashIds })

async function bench(args: string[]) {
  const out = join(mkdtempSync(join(dir, 'run-')), 'out')
  return { ...(await runCli(['bench', ...args, '--out', out])), out }
}

describe('kinfctl bench --data trace:FILE', () => {
  it('replays a trace at each --trace-speed, skipping what does not fit, and says so', async () => {
    const file = traceFile('ok.jsonl', [
      request(0, 600, [0, 1]),
      request(500, 700, [0, 1]),
      request(900, 50_000, [2]),
      request(1500, 300, [3]),
    ])
    const { code, stdout, stderr, out } = await bench([
      '--data',
      `trace:${file}`,
      '--trace-speed',
      '1,4',
      '--routers',
      'round-robin',
      '--max-requests',
      '4',
      '--threads',
      '1',
    ])
    expect(stderr).not.toMatch(/kinfctl bench:/)
    expect(code).toBe(0)
    expect(stdout).toMatch(/^\| round-robin \| trace@1 \| 1 \|/m)
    expect(stdout).toMatch(/^\| round-robin \| trace@4 \| 4 \|/m)
    const note = `custom: trace:${file} requests 0 to 3, 1 skipped (prompt and output over the 32768-token context)`
    expect(stdout).toContain(note)
    expect(readFileSync(join(out, 'benchmarks.md'), 'utf8')).toContain(note)
    const report = JSON.parse(readFileSync(join(out, 'benchmarks.json'), 'utf8')) as BenchmarkReport
    expect(report.benchmarks.map((b) => [b.config.profile, b.config.rate])).toEqual([
      ['trace@1', 1],
      ['trace@4', 4],
    ])
    for (const b of report.benchmarks) expect(b.metrics.request_totals.total).toBe(3)
    expect(report.args.trace_skipped_requests).toEqual({ custom: 1 })
  }, 60_000)

  it('names the file, line and field of a bad line, with no stack trace, and writes nothing', async () => {
    const file = traceFile('bad.jsonl', [request(0, 600, [0, 1]), request(10, 600, [0, 1.5])])
    const { code, stderr, out } = await bench([
      '--data',
      `trace:${file}`,
      '--routers',
      'round-robin',
    ])
    expect(code).toBe(1)
    expect(stderr).toMatch(
      new RegExp(`^kinfctl bench: ${file.replaceAll('.', '\\.')}:2: hash_ids\\[1\\]: `),
    )
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).not.toMatch(/\n\s+at /)
    expect(existsSync(out)).toBe(false)
  })

  it('refuses timestamps going backwards and an unknown vendored trace', async () => {
    const file = traceFile('back.jsonl', [request(100, 600, [0]), request(50, 600, [1])])
    const back = await bench(['--data', `trace:${file}`, '--routers', 'round-robin'])
    expect(back.stderr).toContain(
      `kinfctl bench: ${file}:2: timestamp: 50 is before the previous request's 100`,
    )
    const unknown = await bench(['--data', 'trace:nope', '--routers', 'round-robin'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(
      /nope\.jsonl: cannot read the trace \(ENOENT\); vendored traces: mooncake-synthetic/,
    )
  })

  it('takes the trace options only with a trace, and a trace’s speed only as --trace-speed', async () => {
    const file = traceFile('flags.jsonl', [request(0, 600, [0])])
    const cases: [string[], RegExp][] = [
      [
        ['--data', 'prompt_tokens=8,output_tokens=1', '--rate', '1', '--trace-speed', '2'],
        /--trace-speed needs --profile trace/,
      ],
      [
        ['--data', 'prompt_tokens=8,output_tokens=1', '--rate', '1', '--trace-offset', '2'],
        /--trace-offset needs --data trace:FILE/,
      ],
      [['--data', `trace:${file}`, '--rate', '2'], /a trace replays at --trace-speed, not --rate/],
      [
        ['--data', `trace:${file}`, '--trace-speed', '0'],
        /--trace-speed must be a positive number/,
      ],
      [
        ['--data', `trace:${file}`, '--trace-offset=-1'],
        /--trace-offset must be a non-negative integer/,
      ],
      [
        ['--data', 'prompt_tokens=8,output_tokens=1', '--profile', 'trace'],
        /profile trace needs --data trace:FILE/,
      ],
      [
        [
          '--data',
          'fan_out=4,prefix_tokens=8,prompt_tokens=8,output_tokens=1',
          '--profile',
          'concurrent',
          '--rate',
          '4',
        ],
        /fan_out bursts need an open-loop profile/,
      ],
    ]
    for (const [args, message] of cases) {
      const { code, stderr } = await bench([...args, '--routers', 'round-robin'])
      expect(stderr, args.join(' ')).toMatch(message)
      expect(code, args.join(' ')).toBe(2)
    }
    const past = await bench([
      '--data',
      `trace:${file}`,
      '--trace-offset',
      '1',
      '--routers',
      'round-robin',
    ])
    expect(past.stderr).toMatch(/trace offset 1 is past the trace's 1 requests/)
  })
})
