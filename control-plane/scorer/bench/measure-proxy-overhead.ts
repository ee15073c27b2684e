import { type ChildProcess, spawn } from 'node:child_process'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'

export interface ProxyOverhead {
  streams: number
  direct: { p50Ms: number; p99Ms: number; requests: number }
  viaScorer: { p50Ms: number; p99Ms: number; requests: number }
  addedP50Ms: number
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}

async function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const newline = out.indexOf('\n')
      if (newline >= 0) resolve(out.slice(0, newline))
    })
    child.once('exit', (code) => reject(new Error(`child exited with ${code}`)))
  })
}

/**
 * What the scorer adds to time to first token: `streams` closed-loop streaming clients
 * against pods with constant timing (a separate process), directly and through the scorer
 * (another process), in alternating phases so drift on a shared machine hits both alike.
 * Streams start at random offsets, so requests arrive spread out rather than in waves.
 * The scorer does its whole job on each request: tokenize (a shared system prompt and a
 * new question), look up the index, choose, proxy.
 */
export async function measureProxyOverhead(options: {
  streams: number
  phaseSeconds: number
  phases: number
  seed: number
  tokens: number
  itlMs: number
  /** Writes a CPU profile of the scorer there. */
  profileDir?: string
}): Promise<ProxyOverhead> {
  const upstream = spawn(
    process.execPath,
    [
      'control-plane/scorer/bench/fixed-latency-upstream.ts',
      '--pods',
      '3',
      '--tokens',
      String(options.tokens),
      '--itl-ms',
      String(options.itlMs),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  const podUrls = (JSON.parse(await firstLine(upstream)) as number[]).map(
    (port) => `http://127.0.0.1:${port}`,
  )
  const podFlags = podUrls.flatMap((url, i) => ['--pod', `name=p${i},http=${url}`])
  const scorer = spawn(
    process.execPath,
    [
      ...(options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : []),
      'control-plane/kinfctl/main.ts',
      'scorer',
      '--port',
      '0',
      '--allow-unsigned',
      '--model',
      'bench',
      ...podFlags,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  try {
    const scorerLine = await firstLine(scorer)
    const scorerUrl = /listening on (\S+)/.exec(scorerLine)?.[1]
    if (!scorerUrl) throw new Error(`scorer did not start: ${scorerLine}`)
    const random = createSeededRandom(options.seed)
    const system = Array.from({ length: 800 }, (_, i) => `word${i % 97}`).join(' ')
    const direct: number[] = []
    const viaScorer: number[] = []
    const run = async (target: 'direct' | 'scorer', seconds: number, out: number[]) => {
      const deadline = performance.now() + seconds * 1000
      let turn = 0
      // Streams start spread over one request's length, so arrivals are spread as in real
      // traffic instead of arriving in waves of `streams` at once.
      const requestMs = 50 + options.tokens * options.itlMs
      const stream = async () => {
        await new Promise((resolve) => setTimeout(resolve, random() * requestMs))
        while (performance.now() < deadline) {
          const base = target === 'scorer' ? scorerUrl : podUrls[turn++ % podUrls.length]
          const started = performance.now()
          const response = await fetch(`${base}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              model: 'bench',
              stream: true,
              messages: [
                { role: 'system', content: system },
                { role: 'user', content: `question ${Math.floor(random() * 1e9)}` },
              ],
            }),
          })
          let first = true
          for await (const _chunk of response.body as ReadableStream<Uint8Array>) {
            if (first) out.push(performance.now() - started)
            first = false
          }
        }
      }
      await Promise.all(Array.from({ length: options.streams }, stream))
    }
    await run('scorer', 2, [])
    for (let phase = 0; phase < options.phases; phase++) {
      await run('direct', options.phaseSeconds, direct)
      await run('scorer', options.phaseSeconds, viaScorer)
    }
    return {
      streams: options.streams,
      direct: {
        p50Ms: quantile(direct, 0.5),
        p99Ms: quantile(direct, 0.99),
        requests: direct.length,
      },
      viaScorer: {
        p50Ms: quantile(viaScorer, 0.5),
        p99Ms: quantile(viaScorer, 0.99),
        requests: viaScorer.length,
      },
      addedP50Ms: quantile(viaScorer, 0.5) - quantile(direct, 0.5),
    }
  } finally {
    scorer.kill('SIGINT')
    upstream.kill('SIGTERM')
  }
}
