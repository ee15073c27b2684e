import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  loadMooncakeTrace,
  tracePathOf,
} from '../../../../../control-plane/lab/bench/trace/load-mooncake-trace.ts'

const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ timestamp: 0, input_length: 600, output_length: 4, hash_ids: [0, 1], ...fields })

describe('loadMooncakeTrace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kinf-trace-'))

  it('resolves a bare name to the vendored trace, relative to the repository', async () => {
    const repo = fileURLToPath(new URL('../../../../../', import.meta.url))
    expect(tracePathOf('trace:mooncake-synthetic')).toBe(
      join(repo, 'data/traces/mooncake-synthetic.jsonl'),
    )
    expect(tracePathOf('trace:mooncake-synthetic.jsonl')).toBe(
      tracePathOf('trace:mooncake-synthetic'),
    )
    const trace = await loadMooncakeTrace('trace:mooncake-synthetic')
    expect(trace).toHaveLength(3993)
    expect(trace[0]?.hash_ids).toHaveLength(Math.ceil((trace[0]?.input_length ?? 0) / 512))
  })

  it('reads a path as given, and says which traces are vendored for an unknown name', async () => {
    const path = join(dir, 'two.jsonl')
    writeFileSync(path, `${line({})}\n${line({ timestamp: 9 })}\n`)
    expect(await loadMooncakeTrace(`trace:${path}`)).toHaveLength(2)
    await expect(loadMooncakeTrace('trace:no-such-trace')).rejects.toThrow(
      /no-such-trace\.jsonl: cannot read the trace \(ENOENT\); vendored traces: .*mooncake-synthetic/,
    )
  })

  it('refuses a file over the size limit before reading it', async () => {
    const path = join(dir, 'big.jsonl')
    writeFileSync(path, `${line({})}\n`.repeat(20))
    await expect(loadMooncakeTrace(`trace:${path}`, 100)).rejects.toThrow(
      `${path}: the trace is ${20 * (line({}).length + 1)} bytes, over the limit of 100`,
    )
  })

  it('names the file and line of a bad line in a file', async () => {
    const path = join(dir, 'bad.jsonl')
    writeFileSync(path, `${line({})}\n${line({ hash_ids: [-1] })}\n`)
    await expect(loadMooncakeTrace(`trace:${path}`)).rejects.toThrow(
      new RegExp(`^${path.replaceAll('.', '\\.')}:2: hash_ids\\[0\\]: `),
    )
  })
})
