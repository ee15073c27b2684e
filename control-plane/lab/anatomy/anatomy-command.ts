import { parseArgs } from 'node:util'
import { type CliIo, exitCode, UsageError } from '../../kinfctl/cli-io.ts'
import { benchPresets, defaultBenchPods } from '../bench/bench-presets.ts'
import { runDesJob } from '../bench/des/des-job.ts'
import type { BenchmarkRun } from '../bench/request-record.ts'
import { loadSimModelAssets } from '../sim/sim-model-assets.ts'
import { byPod, byTurn, byWindow, dispatchLoad, group, type TtftGroup } from './request-anatomy.ts'

export const anatomyUsage = `Usage: kinfctl anatomy --preset NAME --rate R [options]

Runs one workload in the discrete-event benchmark, request by request, and shows where
its TTFT goes: per turn (multi-turn), per pod, per window of arrivals, and what the pods
held when the slowest requests were sent (their pod against the least busy other). The
benchmark reports give a run's distribution; this says which requests make its tail.
Same jobs as kinfctl bench (same seed, same figures).

Options:
      --preset NAME       a kinfctl bench preset (${Object.keys(benchPresets).join(', ')})
      --rate R            requests/s (poisson presets) or streams (concurrent ones)
      --routers LIST      strategies, comma-separated (default kinference,gie-default)
      --seeds LIST        comma-separated (default 1); groups pool every seed's requests
      --max-requests N    requests per run (default the preset's)
      --pods N            pods (default the preset's, else ${defaultBenchPods})
      --window-s S        width of the arrival windows (default 30)
      --slow-quantile Q   the slow requests are those above this TTFT quantile (default 0.9)
`

function positive(name: string, text: string, integer = false): number {
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)))
    throw new UsageError(`--${name} "${text}" is not a positive ${integer ? 'integer' : 'number'}`)
  return value
}

function list(name: string, text: string): string[] {
  const items = text.split(',').map((item) => item.trim())
  if (items.some((item) => item === ''))
    throw new UsageError(`--${name} "${text}" has an empty item`)
  return items
}

function table(title: string, groups: readonly TtftGroup[]): string {
  const rows = groups.map(
    (g) =>
      `| ${g.key} | ${g.requests} | ${g.medianS.toFixed(2)} | ${g.p90S.toFixed(2)} | ${(100 * g.missShare).toFixed(0)}% |`,
  )
  return [
    `${title}\n`,
    '| group | requests | median TTFT (s) | p90 TTFT (s) | under half cached |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
  ].join('\n')
}

function describe(router: string, runs: readonly BenchmarkRun[], windowS: number, slowQ: number) {
  const records = runs.flatMap((run) => run.records)
  const served = runs.map((run) => run.records.length / ((run.endMs - run.startMs) / 1000))
  const preemptions = runs.reduce((sum, run) => sum + (run.preemptions ?? 0), 0)
  const load = dispatchLoad(
    runs.map((run) => run.records),
    slowQ,
  )
  const all = group('all', records)
  const multiTurn = records.some((r) => r.turn > 0)
  return [
    `## ${router}\n`,
    `${records.length} requests over ${runs.length} run(s): median TTFT ${all.medianS.toFixed(2)} s, p90 ${all.p90S.toFixed(2)} s; served ${(served.reduce((a, b) => a + b, 0) / served.length).toFixed(2)} req/s; ${preemptions} preemptions.\n`,
    multiTurn ? table('### Per turn', byTurn(records)) : '',
    table('### Per pod', byPod(records)),
    table(`### Per ${windowS}-s window of arrivals`, byWindow(records, windowS)),
    `### When the slowest were sent (above the ${slowQ} quantile, ${load.slowRequests} requests)\n`,
    `Their pod: ${load.chosen.inFlight.toFixed(1)} in flight, ${load.chosen.waiting.toFixed(1)} waiting for a first token; the least busy other pod: ${load.leastBusyOther.inFlight.toFixed(1)} in flight, ${load.leastBusyOther.waiting.toFixed(1)} waiting.\n\n`,
  ].join('\n')
}

export async function anatomyCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      preset: { type: 'string' },
      rate: { type: 'string' },
      routers: { type: 'string', default: 'kinference,gie-default' },
      seeds: { type: 'string', default: '1' },
      'max-requests': { type: 'string' },
      pods: { type: 'string' },
      'window-s': { type: 'string', default: '30' },
      'slow-quantile': { type: 'string', default: '0.9' },
    },
  })
  const preset = values.preset === undefined ? undefined : benchPresets[values.preset]
  if (!preset) throw new UsageError(`--preset "${values.preset ?? ''}" is not a preset`)
  if (preset.profile === 'trace')
    throw new UsageError(`--preset ${preset.name} replays a trace: not supported`)
  if (values.rate === undefined) throw new UsageError('--rate is required')
  const rate = positive('rate', values.rate)
  const slowQ = positive('slow-quantile', values['slow-quantile'])
  if (slowQ >= 1)
    throw new UsageError(`--slow-quantile "${values['slow-quantile']}" is not below 1`)
  const seeds = list('seeds', values.seeds).map((s) => {
    if (!/^\d+$/.test(s)) throw new UsageError(`--seeds item "${s}" is not a whole number`)
    return Number(s)
  })
  const maxRequests = values['max-requests']
    ? positive('max-requests', values['max-requests'], true)
    : preset.maxRequests
  const pods = values.pods ? positive('pods', values.pods, true) : (preset.pods ?? defaultBenchPods)
  const windowS = positive('window-s', values['window-s'])
  const assets = loadSimModelAssets()
  io.stdout(
    `# ${preset.name} at ${rate} ${preset.profile === 'concurrent' ? 'streams' : 'req/s'}, seeds ${seeds.join(', ')}\n\n`,
  )
  for (const router of list('routers', values.routers)) {
    const runs: BenchmarkRun[] = []
    for (const seed of seeds)
      runs.push(
        await runDesJob(
          {
            workloadName: preset.name,
            data: preset.data,
            profile: preset.profile,
            rate,
            router,
            maxRequests,
            pods,
            gpuProfile: preset.gpuProfile ?? 'l40s-27b-fp8',
            seed,
          },
          assets,
        ),
      )
    io.stdout(describe(router, runs, windowS, slowQ))
  }
  return exitCode.ok
}
