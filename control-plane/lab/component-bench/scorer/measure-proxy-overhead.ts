import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canonicalJson } from '../../../../shared/config/canonical-json.ts'
import { estimatePromptTokens } from '../../../../shared/openai/estimate-prompt-tokens.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import { createScorerClient, type ScorerPort } from '../../../../workers/app/scorer-client.ts'
import {
  benchDemoPolicy,
  benchSecret,
  demoModel,
  demoPool,
  demoTenant,
} from './bench-demo-policy.ts'

interface Arm {
  p50Ms: number
  p99Ms: number
  requests: number
}

export interface ProxyOverhead {
  streams: number
  direct: Arm
  /** Forwards whose backend the edge already chose. */
  viaScorer: Arm
  addedP50Ms: number
  /** As the edge sends a request whose policy depends on the pool's status: signed, every call. */
  statusDependent: Arm & { calls: number }
  statusDependentAddedP50Ms: number
}

const claims = { tenant: demoTenant, labels: [], backends: [], allowBurst: false }

/** What the edge does for a status-dependent policy: one route call with the policy. */
async function statusDependentCall(
  scorer: ScorerPort,
  bundleJson: string,
  body: string,
  promptTokens: number,
): Promise<Response> {
  const answer = await scorer.route('chat', bundleJson, body, { ...claims, promptTokens }, {})
  if (answer.kind !== 'served') throw new Error(`not served: ${JSON.stringify(answer.decided)}`)
  return answer.response
}
const statusDependentCalls = 1

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
 * new question), look up the index, choose, proxy. A third arm sends each request as the
 * edge does when its policy depends on the pool's status (the edge's own scorer client,
 * signed, every call it makes), so any extra round trip or pass shows as it is.
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
  /** The environment the scorer and the pods run with (the entry point's). */
  env: Readonly<Record<string, string | undefined>>
}): Promise<ProxyOverhead> {
  const upstream = spawn(
    process.execPath,
    [
      'control-plane/lab/component-bench/scorer/fixed-latency-upstream.ts',
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
  const podFlags = podUrls.flatMap((url, i) => ['--pod', `name=p${i},http=${url},pool=${demoPool}`])
  const { snapshot, bundleJson } = await benchDemoPolicy()
  const dir = await mkdtemp(join(tmpdir(), 'kinference-bench-'))
  const configFile = join(dir, 'snapshot.json')
  await writeFile(configFile, canonicalJson(snapshot))
  const scorer = spawn(
    process.execPath,
    [
      ...(options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : []),
      'control-plane/kinfctl/main.ts',
      'scorer',
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--allow-unsigned',
      '--config',
      configFile,
      ...podFlags,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...options.env, KINFERENCE_SIGNING_SECRETS: benchSecret },
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
    const statusDependent: number[] = []
    const client = createScorerClient({
      urls: [scorerUrl],
      signingSecret: benchSecret,
      nowSeconds: () => Date.now() / 1000,
      fetch,
    })
    const run = async (target: 'direct' | 'scorer' | 'status', seconds: number, out: number[]) => {
      const deadline = performance.now() + seconds * 1000
      let turn = 0
      // Streams start spread over one request's length, so arrivals are spread as in real
      // traffic instead of arriving in waves of `streams` at once.
      const requestMs = 50 + options.tokens * options.itlMs
      const stream = async () => {
        await new Promise((resolve) => setTimeout(resolve, random() * requestMs))
        while (performance.now() < deadline) {
          const base = target === 'direct' ? podUrls[turn++ % podUrls.length] : scorerUrl
          const body = JSON.stringify({
            model: demoModel,
            stream: true,
            messages: [
              { role: 'system', content: system },
              { role: 'user', content: `question ${Math.floor(random() * 1e9)}` },
            ],
          })
          // The edge's estimate, computed on its side before the call.
          const estimated = estimatePromptTokens(`${system}\nquestion`)
          const started = performance.now()
          const response =
            target === 'status'
              ? await statusDependentCall(client, bundleJson, body, estimated)
              : await fetch(`${base}/v1/chat/completions`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/json' },
                  body,
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
    await run('status', 2, [])
    for (let phase = 0; phase < options.phases; phase++) {
      await run('direct', options.phaseSeconds, direct)
      await run('scorer', options.phaseSeconds, viaScorer)
      await run('status', options.phaseSeconds, statusDependent)
    }
    const arm = (values: number[]): Arm => ({
      p50Ms: quantile(values, 0.5),
      p99Ms: quantile(values, 0.99),
      requests: values.length,
    })
    return {
      streams: options.streams,
      direct: arm(direct),
      viaScorer: arm(viaScorer),
      addedP50Ms: quantile(viaScorer, 0.5) - quantile(direct, 0.5),
      statusDependent: { ...arm(statusDependent), calls: statusDependentCalls },
      statusDependentAddedP50Ms: quantile(statusDependent, 0.5) - quantile(direct, 0.5),
    }
  } finally {
    scorer.kill('SIGINT')
    upstream.kill('SIGTERM')
    await rm(dir, { recursive: true, force: true })
  }
}
