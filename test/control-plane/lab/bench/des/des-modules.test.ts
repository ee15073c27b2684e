import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../../../', import.meta.url))

// A child process that records every module it resolves, loads what a DES worker thread
// loads, runs one small benchmark, and prints the list.
const script = `
import { registerHooks } from 'node:module'
const loaded = new Set()
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context)
    loaded.add(resolved.url)
    return resolved
  },
})
await import(${JSON.stringify(`${root}control-plane/lab/bench/des/des-worker.ts`)})
const { runDesJob } = await import(${JSON.stringify(`${root}control-plane/lab/bench/des/des-job.ts`)})
const { loadSimModelAssets } = await import(${JSON.stringify(`${root}control-plane/lab/sim/sim-model-assets.ts`)})
const run = await runDesJob(
  {
    workloadName: 'tiny',
    data: 'prompt_tokens=64,output_tokens=8,prefix_count=2,prefix_tokens=128',
    profile: 'poisson',
    rate: 4,
    router: 'kinference',
    maxRequests: 12,
    pods: 2,
    gpuProfile: 'l40s-27b-fp8',
    seed: 1,
  },
  loadSimModelAssets(),
)
process.stdout.write(JSON.stringify({ records: run.records.length, loaded: [...loaded] }))
`

describe('a discrete-event benchmark', () => {
  it('loads no ZMQ binding and no HTTP server: only the engine, the router and the tokenizer', () => {
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
    })
    const { records, loaded } = JSON.parse(output) as { records: number; loaded: string[] }
    expect(records).toBe(12)
    expect(
      loaded.some((url) => url.includes('/control-plane/lab/bench/des/run-des-benchmark.ts')),
    ).toBe(true)
    const forbidden = loaded.filter((url) =>
      /zeromq|node:(http|https|net|http2)$|\/sim\/(pod-http-server|sim-pod|sim-fleet)\.ts|\/scorer\//.test(
        url,
      ),
    )
    expect(forbidden).toEqual([])
  })
})
