import { readFile, writeFile } from 'node:fs/promises'
import { cpus, totalmem } from 'node:os'
import { parseArgs } from 'node:util'
import { type CliIo, exitCode, UsageError } from '../../kinfctl/cli-io.ts'
import { chaosSize } from './chaos-scenario.ts'
import { chaosScenarios } from './chaos-scenarios.ts'
import { renderReliabilityTable, replaceReliabilityTable } from './reliability-report.ts'
import { runChaos } from './run-chaos.ts'
import { scenarioPassed } from './scenario-result.ts'

export const chaosUsage = `Usage: npm run chaos -- [options]   (node control-plane/lab/chaos/main.ts [options])

Runs the chaos scenarios against the real stack on loopback: simulated vLLM pods, scorers
and the edge each in their own process, Redis (REDIS_URL, default redis://127.0.0.1:6379)
through a proxy that can be cut, and the local Bedrock stand-in. Each scenario sends
traffic through the edge with the openai client, injects its fault, and counts requests
completed, failed with a clear OpenAI-shaped error, and lost (no answer, a hang, a stream
cut without an error event, a 5xx without a body). Every scenario is bounded in time and
requests; traffic goes only to 127.0.0.0/8.
Exit status: 0 when every scenario lost nothing and met its checks, 1 otherwise.

Options:
      --size short|full   CI's short version or the full one (default full)
      --scenario ID       run only this one (repeatable); ids: ${chaosScenarios.map((s) => s.id).join(', ')}
      --seed S            seed of the traffic and the pods (default 1)
      --out FILE          write the results table into FILE (e.g. docs/reliability.md),
                          between its results markers (appended when it has none)
      --json              print the results as JSON instead of the table
`

export async function chaosCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      size: { type: 'string', default: 'full' },
      scenario: { type: 'string', multiple: true, default: [] },
      seed: { type: 'string', default: '1' },
      out: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  })
  const size = chaosSize(values.size)
  const seed = Number(values.seed)
  if (!Number.isInteger(seed)) throw new UsageError(`--seed "${values.seed}" is not an integer`)
  const unknown = values.scenario.filter((id) => !chaosScenarios.some((s) => s.id === id))
  if (unknown.length > 0) throw new UsageError(`unknown --scenario ${unknown.join(', ')}`)
  const scenarios =
    values.scenario.length === 0
      ? chaosScenarios
      : chaosScenarios.filter((s) => values.scenario.includes(s.id))
  const results = await runChaos(scenarios, {
    size,
    seed,
    redisUrl: io.env.REDIS_URL || 'redis://127.0.0.1:6379',
    log: (line) => io.stderr(`${line}\n`),
    nowMs: () => performance.now(),
  })
  const table = renderReliabilityTable(results, {
    size,
    seed,
    date: new Date().toISOString().slice(0, 10),
    machine: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`,
  })
  if (values.out) {
    const before = await readFile(values.out, 'utf8').catch(() => '')
    await writeFile(values.out, replaceReliabilityTable(before, table))
  }
  io.stdout(values.json ? `${JSON.stringify(results, null, 2)}\n` : table)
  return results.every(scenarioPassed) ? exitCode.ok : exitCode.invalid
}
