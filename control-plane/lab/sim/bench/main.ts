import { spawn } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { l40s27bFp8 } from '../../../../shared/gpu/gpu-profile.ts'
import type { LagStats } from '../real-time-driver.ts'
import { loadSimModelAssets } from '../sim-model-assets.ts'
import { measureEngineSteps } from './measure-engine-steps.ts'
import { runStreamLoad } from './run-stream-load.ts'

/**
 * npm run bench:sim — the simulator's two performance figures:
 * 1. engine steps per second on one core with 64 running requests;
 * 2. `kinfctl sim` (pods in a child process) under N × 64 closed-loop streams at a time
 *    scale, driven from this process: how far each pod's driver falls behind its clock.
 */
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    pods: { type: 'string', default: '3' },
    streams: { type: 'string', default: '64' },
    'time-scale': { type: 'string', default: '10' },
    'prompt-tokens': { type: 'string', default: '1024' },
    'output-tokens': { type: 'string', default: '256' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string', default: 'results/bench-sim.json' },
  },
})
const seconds = Number(values.seconds)
const pods = Number(values.pods)
const streams = Number(values.streams)
const timeScale = Number(values['time-scale'])
const seed = Number(values.seed)

const engine = measureEngineSteps(l40s27bFp8, 64, Math.min(seconds, 10), seed)
process.stdout.write(
  `engine: ${Math.round(engine.stepsPerSecond)} steps/s with ${engine.meanRunning.toFixed(1)} running requests (one core, ${engine.steps} steps in ${engine.seconds.toFixed(1)} s, ${engine.modelledSeconds.toFixed(0)} s modelled)\n`,
)

const child = spawn(
  process.execPath,
  [
    'control-plane/kinfctl/main.ts',
    'sim',
    '--pods',
    String(pods),
    '--port',
    '0',
    '--zmq-port',
    '0',
    '--time-scale',
    String(timeScale),
    '--seed',
    String(seed),
    '--enable-prompt-tokens-details',
    '--output',
    'json',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)
const urls = await new Promise<string[]>((resolve, reject) => {
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString()
    const lines = out.split('\n').filter(Boolean)
    if (lines.length === pods)
      resolve(lines.map((line) => (JSON.parse(line) as { http: string }).http))
  })
  child.once('exit', (code) => reject(new Error(`kinfctl sim exited with ${code}`)))
})

// Words the pods' own Qwen3 tokenizer keeps one token each, so prompts have the asked length.
const words = loadSimModelAssets('qwen3').vocabulary.words.map((w) => ` ${w.word}`)
// The first seconds fill every pod's batch at once; lag is measured after them.
const warmUp = setTimeout(
  () => {
    for (const url of urls) void fetch(`${url}/admin/stats/reset`, { method: 'POST' })
  },
  Math.min(5, seconds / 4) * 1000,
)
const load = await Promise.all(
  urls.map((url, i) =>
    runStreamLoad({
      url,
      streams,
      seconds,
      promptWords: words,
      promptTokens: Number(values['prompt-tokens']),
      outputTokens: Number(values['output-tokens']),
      seed: seed * 1000 + i,
    }),
  ),
)
clearTimeout(warmUp)
const stats = await Promise.all(
  urls.map(
    async (url) =>
      (await (await fetch(`${url}/admin/stats`)).json()) as {
        lag: LagStats
        engine: { running: number; preemptions: number }
      },
  ),
)
child.kill('SIGINT')

const rows = urls.map((url, i) => ({ url, ...load[i], lag: stats[i]?.lag }))
for (const row of rows) {
  process.stdout.write(
    `${row.url}: ${row.requests} requests, ${row.tokens} tokens (${Math.round((row.tokens ?? 0) / seconds)}/s real), ${row.failures} failures; driver lag p99 ${row.lag?.p99Ms.toFixed(2)} ms, max ${row.lag?.maxMs.toFixed(2)} ms, mean ${row.lag?.meanMs.toFixed(3)} ms over ${row.lag?.steps} steps\n`,
  )
}
const worstP99 = Math.max(...rows.map((r) => r.lag?.p99Ms ?? 0))
process.stdout.write(
  `server: ${pods} pods × ${streams} streams at time scale ${timeScale}: worst driver lag p99 ${worstP99.toFixed(2)} ms real (= ${(worstP99 * timeScale).toFixed(1)} ms modelled)\n`,
)
await mkdir('results', { recursive: true })
await writeFile(
  values.out,
  `${JSON.stringify({ engine, server: { pods, streams, timeScale, seconds, rows } }, null, 2)}\n`,
)
