import { parseArgs } from 'node:util'
import { gpuProfiles } from '../../../shared/gpu/gpu-profile.ts'
import { type CliIo, exitCode, UsageError } from '../../kinfctl/cli-io.ts'
import { SimKvEventsOptions } from '../sim/engine/kv-events-options.ts'
import { startSimFleet } from '../sim/sim-fleet.ts'

export const simUsage = `Usage: kinfctl sim [options]

Starts simulated vLLM pods: vLLM V1's scheduler and prefix cache modelled step by step,
behind vLLM's OpenAI API, /metrics and KV events (ZMQ). Pod i serves HTTP on
H:port + i, publishes KV events on tcp://H:zmq-port + 2i (topic kv@<pod>@<model>) and
answers replay requests on tcp://H:zmq-port + 2i + 1, H being --host (every interface
for 0.0.0.0 or ::). Pods on their own addresses can share ports, as pods in a cluster
do: on Linux all of 127.0.0.0/8 is loopback, so
  kinfctl sim --pods 1 --host 127.0.0.2 --name vllm-a
  kinfctl sim --pods 1 --host 127.0.0.3 --name vllm-b
run side by side on ports 8000, 5557 and 5558. Runs until interrupted.

Options:
      --pods N              number of pods (default 3)
      --profile NAME        GPU/model profile (default l40s-27b-fp8; known: ${Object.keys(gpuProfiles).join(', ')})
      --model NAME          served model name (default qwen3.8-27b-fp8)
      --tokenizer T         the model's tokenizer and chat template: a built-in name
                            (qwen3, llama3.1, gpt-oss, gemma3, deepseek-v3; default qwen3)
                            or a Hugging Face model directory (a path, with a "/"), loaded
                            by the simulator's own code, not the router's
      --enable-prompt-tokens-details
                            vLLM's flag: usage.prompt_tokens_details.cached_tokens in
                            answers (off by default, as in vLLM; Kinference deploys with it)
      --port P              first HTTP port (default 8000; 0 = free ports)
      --zmq-port Z          first KV-event port (default 5557; 0 = free ports)
      --host H              HTTP and KV-event listen address (default 127.0.0.1; an IPv4
                            address or name, or 0.0.0.0 / :: for every interface)
      --name NAME           the pod's name, e.g. its Pod object's (one pod: --pods defaults
                            to 1; default sim-pod-0, sim-pod-1, …)
      --time-scale X        run X times faster than the modelled GPU (default 1)
      --seed S              seed of every random choice (default 0)
      --event-encoding E    map (current vLLM) or array (legacy) (default map)
      --data-parallel-size N  engines per pod, as vLLM's --data-parallel-size (default 1):
                            rank r publishes on the pod's KV-event port + r and replays on
                            its replay port + r, which then come 2N apart from pod to pod
                            (events zmq-port + 2Ni + r, replay + N); X-data-parallel-rank
                            picks the engine of a request
      --runner R            vLLM's --runner: generate (default) serves the completions
                            APIs; pooling serves /v1/embeddings instead (no KV events)
      --enable-prefix-caching
                            vLLM's flag, for a pooling pod: a LAST-pooling model (e.g.
                            Qwen3-Embedding) whose inputs reuse cached prefixes and publish
                            KV events as prompts do (a generate pod always caches)
      --lora NAME           a LoRA adapter the pods serve, as vLLM's --lora-modules name
                            (repeatable): a request whose model is NAME runs under it
  -o, --output text|json    how to print the pods' addresses (default text)
KV-event variants of vLLM (default: one GPU-only KV-cache group, as vLLM by default):
      --cpu-offload-blocks N    a CPU tier of N blocks, as vLLM's OffloadingConnector: its
                                events (medium CPU, block_size 0, no token ids) share the
                                step's batch with the GPU ones
      --sliding-window W        a hybrid model: a sliding-window KV-cache group of W tokens
                                beside the full-attention one (events carry group_idx)
      --kv-cache-report-mode M  incremental (default) or full: reused blocks re-announced
      --extra-keys K            plain (default), typed or omitted (vLLM before PR #33304)
      --replay-framing F        topic (['', topic, seq, payload], default) or legacy
Faults (also settable at run time: POST /admin/faults on a pod):
      --fault-error-rate P          answer this fraction of requests with a 500
      --fault-drop-events P         lose this fraction of KV-event batches (replayable)
      --fault-event-delay-ms MS     delay every KV-event batch
      --fault-stall-after-tokens N  streams hang after N tokens
`

const number = (name: string, text: string | undefined, fallback: number) => {
  if (text === undefined) return fallback
  const value = Number(text)
  if (text.trim() === '' || !Number.isFinite(value))
    throw new UsageError(`--${name} must be a number, not "${text}"`)
  return value
}

/** A pod's name as Kubernetes spells one (RFC 1123 subdomain), which keeps the topic parseable. */
const podNamePattern = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/

function podNames(name: string | undefined, pods: number): string[] | undefined {
  if (name === undefined) return undefined
  if (pods !== 1) throw new UsageError('--name names one pod: use it with --pods 1')
  if (!podNamePattern.test(name))
    throw new UsageError(
      `--name must be a Kubernetes pod name (lowercase letters, digits, - and .), not "${name}"`,
    )
  return [name]
}

/** The --cpu-offload-blocks … flags as the pods' kvEvents options, checked by their schema. */
function kvEventVariants(values: Record<string, string | boolean | string[] | undefined>) {
  const text = (name: string) => values[name] as string | undefined
  const offload = text('cpu-offload-blocks')
  const window = text('sliding-window')
  const input = {
    ...(offload === undefined
      ? {}
      : { cpuOffload: { capacityBlocks: number('cpu-offload-blocks', offload, 0) } }),
    ...(window === undefined
      ? {}
      : { hybrid: { slidingWindow: number('sliding-window', window, 0) } }),
    ...(text('kv-cache-report-mode') === undefined
      ? {}
      : { reportMode: text('kv-cache-report-mode') }),
    ...(text('extra-keys') === undefined ? {} : { extraKeys: text('extra-keys') }),
    ...(text('replay-framing') === undefined ? {} : { replayFraming: text('replay-framing') }),
  }
  const parsed = SimKvEventsOptions.safeParse(input)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  const flag = flagOfPath[String(issue?.path[0])] ?? 'kv-event variants'
  throw new UsageError(`--${flag}: ${issue?.message ?? 'invalid'}`)
}

const flagOfPath: Record<string, string> = {
  cpuOffload: 'cpu-offload-blocks',
  hybrid: 'sliding-window',
  reportMode: 'kv-cache-report-mode',
  extraKeys: 'extra-keys',
  replayFraming: 'replay-framing',
}

export async function simCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      pods: { type: 'string' },
      profile: { type: 'string', default: 'l40s-27b-fp8' },
      model: { type: 'string', default: 'qwen3.8-27b-fp8' },
      tokenizer: { type: 'string', default: 'qwen3' },
      'enable-prompt-tokens-details': { type: 'boolean', default: false },
      port: { type: 'string' },
      'zmq-port': { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      name: { type: 'string' },
      'time-scale': { type: 'string' },
      seed: { type: 'string' },
      'event-encoding': { type: 'string', default: 'map' },
      'data-parallel-size': { type: 'string' },
      lora: { type: 'string', multiple: true, default: [] },
      runner: { type: 'string', default: 'generate' },
      'enable-prefix-caching': { type: 'boolean' },
      output: { type: 'string', short: 'o', default: 'text' },
      'cpu-offload-blocks': { type: 'string' },
      'sliding-window': { type: 'string' },
      'kv-cache-report-mode': { type: 'string' },
      'extra-keys': { type: 'string' },
      'replay-framing': { type: 'string' },
      'fault-error-rate': { type: 'string' },
      'fault-drop-events': { type: 'string' },
      'fault-event-delay-ms': { type: 'string' },
      'fault-stall-after-tokens': { type: 'string' },
    },
  })
  const profile = gpuProfiles[values.profile]
  if (!profile) throw new UsageError(`unknown profile "${values.profile}"`)
  const encoding = values['event-encoding']
  if (encoding !== 'map' && encoding !== 'array')
    throw new UsageError('--event-encoding must be map or array')
  if (values.output !== 'text' && values.output !== 'json')
    throw new UsageError('--output must be text or json')
  const pods = number('pods', values.pods, values.name === undefined ? 3 : 1)
  if (!Number.isInteger(pods) || pods < 1 || pods > 256)
    throw new UsageError('--pods must be an integer from 1 to 256')
  const names = podNames(values.name, pods)
  const timeScale = number('time-scale', values['time-scale'], 1)
  if (!(timeScale > 0)) throw new UsageError('--time-scale must be positive')
  const stallAfter = values['fault-stall-after-tokens']
  const dataParallelSize = number('data-parallel-size', values['data-parallel-size'], 1)
  if (!Number.isInteger(dataParallelSize) || dataParallelSize < 1 || dataParallelSize > 64)
    throw new UsageError('--data-parallel-size must be an integer from 1 to 64')
  const runner = values.runner
  if (runner !== 'generate' && runner !== 'pooling')
    throw new UsageError('--runner must be generate or pooling')
  const prefixCaching = values['enable-prefix-caching']
  const fleet = await startSimFleet({
    runner,
    ...(prefixCaching === undefined ? {} : { enablePrefixCaching: prefixCaching }),
    pods,
    profile,
    modelName: values.model,
    tokenizer: values.tokenizer,
    enablePromptTokensDetails: values['enable-prompt-tokens-details'],
    host: values.host,
    ...(names ? { names } : {}),
    port: number('port', values.port, 8000),
    zmqPort: number('zmq-port', values['zmq-port'], 5557),
    timeScale,
    seed: number('seed', values.seed, 0),
    eventEncoding: encoding,
    dataParallelSize,
    loraAdapters: values.lora,
    kvEvents: kvEventVariants(values),
    faults: {
      errorRate: number('fault-error-rate', values['fault-error-rate'], 0),
      dropEventRate: number('fault-drop-events', values['fault-drop-events'], 0),
      eventDelayMs: number('fault-event-delay-ms', values['fault-event-delay-ms'], 0),
      stallAfterTokens:
        stallAfter === undefined ? null : number('fault-stall-after-tokens', stallAfter, 0),
    },
  })
  // Listening before the addresses are printed: whoever reads them may interrupt at once.
  const interrupted = io.untilInterrupted()
  for (const pod of fleet) {
    const where = {
      pod: pod.config.podName,
      http: pod.url,
      kvEvents: pod.kvEventsEndpoint,
      replay: pod.replayEndpoint,
      topic: pod.topic,
      dataParallelSize,
    }
    const ranks = dataParallelSize > 1 ? ` data-parallel-size=${dataParallelSize}` : ''
    io.stdout(
      values.output === 'json'
        ? `${JSON.stringify(where)}\n`
        : `${where.pod} http=${where.http} kv-events=${where.kvEvents} replay=${where.replay} topic=${where.topic}${ranks}\n`,
    )
  }
  io.stderr(
    `${fleet.length} simulated pods (${profile.name}, time scale ${timeScale}); interrupt to stop\n`,
  )
  await interrupted
  await Promise.all(fleet.map((pod) => pod.close()))
  return exitCode.ok
}
