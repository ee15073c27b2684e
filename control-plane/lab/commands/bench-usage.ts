import { gpuProfiles } from '../../../shared/gpu/gpu-profile.ts'
import { benchRouterNames } from '../bench/bench-pool-spec.ts'
import {
  benchPresets,
  defaultBenchPods,
  defaultMaxRequests,
  peakTtftSloMs,
} from '../bench/bench-presets.ts'
import { DesTimingOptions } from '../bench/des/des-timing-options.ts'
import { routingWorkloads } from '../bench/suite/routing/routing-workloads.ts'

const desTimingDefaults = DesTimingOptions.parse({})

/** kinfctl bench --help. */
export const benchUsage = `Usage: kinfctl bench [--suite headline|targets|routing|slo | --preset NAMES | --data SPEC] [options]

Benchmarks routing strategies on one simulated pool, side by side at fixed loads, with
GuideLLM's synthetic data, profiles and metrics. Writes benchmarks.json (GuideLLM's
report shape), benchmarks.md and one SVG chart per workload under --out.

What to run:
      --suite headline      the headline table: shared-prefix, multi-turn, no-prefix, every
                            router, beside the published target numbers and the bounds,
                            with the targets checked
      --suite targets       every target (capacity by bisection, overload, multi-turn
                            tails, the Mooncake trace, fan-out, no regression, scorer
                            replicas), each printed met, not met or not judged
                            (its round robin baseline unstable) with its figure
      --suite routing       issue 25's routing targets on seeds 7,11 (held out from
                            tuning): each prefix workload's steady-state capacity per
                            router and seed, a grid at 50-150% of the best peer's
                            capacity, multi-turn at 80 streams, a stale index, no
                            regression; writes benchmarks.md and targets.json. With
                            --preset NAMES, only those of its workloads (${routingWorkloads.join(', ')})
      --suite slo           issue 26's targets on seeds 7,11: kinference's capacity, then
                            1.5x and 3x of it with a 2 s TTFT objective, every router
                            with its own admission, with and without bursting to the
                            provider; a noisy neighbour (tenants at 10:1); the CPU tier
                            (multi-turn with and without it, the Mooncake trace against
                            its tiered ceiling); writes slo.md
      --preset NAMES        named workloads (${Object.keys(benchPresets).join(', ')}), comma-separated
      --data SPEC           GuideLLM synthetic data: key=value,... (prompt_tokens,
                            output_tokens, first_prompt_tokens, first_output_tokens, each
                            with _stdev/_min/_max; prefix_count, prefix_tokens; turns) or
                            the same as JSON, which also takes prefix_buckets. Fan-out:
                            fan_out=N,fan_out_window_ms=W with prefix_tokens gives bursts
                            of N siblings within W ms sharing a prefix of their own
                            (--rate still counts requests, not bursts). Or trace:FILE, a
                            Mooncake trace (JSONL) replayed; trace:NAME is one vendored
                            in data/traces (e.g. trace:mooncake-synthetic)
      --name NAME           what reports call a --data workload (default custom)
      --profile P           synchronous, concurrent, throughput, constant, poisson,
                            trace (default poisson, trace for trace data; a preset
                            brings its own)
      --rate LIST           comma-separated: requests/s (constant, poisson) or streams
                            (concurrent, throughput); overrides a preset's grid (by
                            default fractions of the workload's fluid throughput bound)
      --max-requests N      requests per benchmark, every turn counting (default ${defaultMaxRequests})
      --trace-speed LIST    trace: comma-separated replay speeds (timestamps ÷ speed), one
                            benchmark each, like --rate (default 1)
      --trace-offset N      trace: the first request replayed (default 0); the slice is
                            --max-requests long, minus the requests longer than the
                            model's context (skipped and counted)
How:
      --mode des|live       discrete-event simulation in virtual time (default), or HTTP
      --target URL          live: an OpenAI-compatible server (its router is what runs;
                            --routers then only labels it). Without it, live starts the
                            scorer in front of simulated pods on loopback per benchmark
      --api-key KEY         live, with --target: sent as authorization: Bearer KEY
                            (default: KINFERENCE_API_KEY)
      --time-scale X        live: pods run X times faster than the GPU they model; times
                            are reported in modelled time (default 20)
      --routers LIST        strategies (default all: ${benchRouterNames.join(', ')})
      --pods N              pods in the pool (default: the preset's, else ${defaultBenchPods})
      --gpu-profile NAME    pod profile (default l40s-27b-fp8, or the preset's; known:
                            ${Object.keys(gpuProfiles).join(', ')})
      --seed S              seed of the data, arrivals and simulation (default 42)
      --seeds LIST          several seeds, each a full run; reports show means and the
                            spread (default: --seed; targets: 1,2,42; routing: 7,11)
      --replicas LIST       des: scorer replicas sharing the KV index (default 1; targets:
                            1,3), each with its own in-flight view and metrics scrapes
      --event-delay-ms MS   des: KV events reach the index this late (default ${desTimingDefaults.eventDelayMs})
      --metrics-interval-ms MS  des: pods' metrics are scraped this often (default ${desTimingDefaults.metricsIntervalMs})
      --metrics-delay-ms MS des: scraped metrics are this old when read (default ${desTimingDefaults.metricsDelayMs})
      --event-loss-rate F   des: share of KV event batches the index never sees (default 0)
      --cpu-tier X          des: the pods copy their KV blocks to a CPU tier (vLLM's
                            OffloadingConnector) of X times their GPU's KV blocks, e.g. 4x,
                            and load them back from it; 0 turns a preset's off (default:
                            the preset's, else none)
      --admission own|none  des: every request carries the --slo-ms TTFT objective;
                            own: kinference refuses (429) what it predicts will miss it,
                            each peer applies its own admission (llm-d's flow control,
                            Dynamo's busy threshold; none for the others); none: all in
      --burst               des, with --admission: refused requests go to the provider
                            (a hosted model with quotas) instead
      --hold                des, with --admission own: kinference holds what its pods
                            cannot start now, token-fair, until its objective's
                            deadline, and counts that wait in its predictions
      --pii-share F         des, with --admission: share of requests carrying personal
                            data, which are never sent to the provider (default 0)
      --request-scale X     targets, routing, slo: scale every scenario's request count
                            (default 1)
      --slo-ms MS           median TTFT limit for peak throughput, and the requests'
                            objective with --admission (default ${peakTtftSloMs})
      --threads N           des: benchmarks run side by side on N threads (default: the
                            cores); the results do not depend on it
      --out DIR             report folder (default results/bench)

Environment: KINFERENCE_API_KEY (the key of --api-key).
Exit status: 0 done (a report lists the requests that failed, and the first error of each
benchmark); when every request failed, the status an error of its kind gives (4 for 401 and
403, 5 for 429, 503 or an unreachable target, 6 for another error) and the first error.
`
