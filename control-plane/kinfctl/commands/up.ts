import { parseArgs } from 'node:util'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import { startEmbedded } from '../../embedded/start-embedded.ts'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'

export const upUsage = `Usage: kinfctl up [--port P] [--pods N] [--time-scale S]

Runs the embedded default on this machine: N simulated vLLM pods (l40s-27b-fp8), the
scorer in front of them, a local Bedrock-compatible server for bursting, and the edge
(OpenAI API) on Node, configured from infra/k8s/demo/embedded.yaml. Prints a demo API key.
Ctrl-C stops everything.

Options:
  --port P         edge port (default: $PORT, else 8787)
  --pods N         simulated pods (default 3)
  --time-scale S   simulated GPU time runs S times faster than real time (default 1)

Environment:
  KINFERENCE_DEMO_KEY   the demo key (kinf_demo_<secret>); a fresh one when unset
  REDIS_URL             keep the scorer's KV index in Redis instead of memory
`

export async function upCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      pods: { type: 'string', default: '3' },
      'time-scale': { type: 'string', default: '1' },
    },
  })
  const port = Number(values.port ?? io.env.PORT ?? '8787')
  const pods = Number(values.pods)
  const timeScale = Number(values['time-scale'])
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be a port number`)
  if (!Number.isInteger(pods) || pods < 1 || pods > 64)
    throw new UsageError('--pods must be 1 to 64')
  if (!(timeScale > 0)) throw new UsageError('--time-scale must be positive')
  const stack = await startEmbedded({
    port,
    pods,
    timeScale,
    ...(io.env.KINFERENCE_DEMO_KEY ? { demoKey: io.env.KINFERENCE_DEMO_KEY } : {}),
    quotas: createMemoryQuotaStore(),
    redisUrl: io.env.REDIS_URL ?? null,
    log: (line) => io.stderr(`${line}\n`),
  })
  const url = stack.edge.url
  io.stdout(
    [
      `Kinference is up: ${pods} simulated pods, scorer ${stack.scorer.url} (index in ${io.env.REDIS_URL ? 'redis' : 'memory'}), local Bedrock stand-in ${stack.bedrock.url}`,
      '',
      `  edge     ${url}/v1   (OpenAI API)`,
      `  api key  ${stack.demoKey}`,
      '',
      `  curl -s ${url}/v1/chat/completions -H 'authorization: Bearer ${stack.demoKey}' \\`,
      `    -d '{"model":"qwen3.8-27b-fp8","messages":[{"role":"user","content":"Hello!"}],"max_tokens":32}'`,
      '',
      `  OPENAI_BASE_URL=${url}/v1 OPENAI_API_KEY=${stack.demoKey}   # for the openai client`,
      '',
      'Models: qwen3.8-27b-fp8 (local, bursts to Bedrock when saturated; PII stays local), gpt-4o (alias),',
      'claude-sonnet (Bedrock stand-in). Labels: x-kinference-labels: batch (runs only when idle).',
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  )
  await io.untilInterrupted()
  await stack.close()
  io.stderr('stopped\n')
  return exitCode.ok
}
