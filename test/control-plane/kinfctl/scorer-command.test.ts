import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { parsePodSpec } from '../../../control-plane/kinfctl/commands/scorer.ts'
import { startSimFleet } from '../../../control-plane/lab/sim/sim-fleet.ts'
import type { SimPod } from '../../../control-plane/lab/sim/sim-pod.ts'
import { l40s27bFp8 } from '../../../shared/gpu/gpu-profile.ts'
import { runCli } from '../../support/run-cli.ts'

const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('kinfctl scorer', () => {
  it('routes to the pods it is given, and stops on SIGINT', async () => {
    const pods: SimPod[] = await startSimFleet({
      pods: 2,
      profile: l40s27bFp8,
      modelName: 'qwen3.8-27b-fp8',
      port: 0,
      zmqPort: 0,
      timeScale: 50,
      seed: 1,
      eventEncoding: 'array',
    })
    cleanups.push(() => Promise.all(pods.map((pod) => pod.close())))
    const podFlags = pods.flatMap((pod) => [
      '--pod',
      `name=${pod.config.podName},http=${pod.url},events=${pod.kvEventsEndpoint},replay=${pod.replayEndpoint}`,
    ])
    const child = spawn(process.execPath, [
      'control-plane/kinfctl/main.ts',
      'scorer',
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--allow-unsigned',
      ...podFlags,
    ])
    cleanups.push(() => child.kill('SIGKILL'))
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    const deadline = performance.now() + 30_000
    while (!/listening on (\S+)/.test(out) && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))
    const url = /listening on (\S+)/.exec(out)?.[1]
    expect(url).toBeDefined()
    const answer = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hello' }], max_tokens: 3 }),
    })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-kinference-decision')).toMatch(
      /^pool=default; pod=sim-pod-[01]; strategy=kinference; /,
    )
    child.kill('SIGINT')
    const [code] = await once(child, 'exit')
    expect(code).toBe(0)
  })

  it('refuses to start unsigned without --allow-unsigned, and bad pod specs, with exit 2', async () => {
    const unsigned = await runCli([
      'scorer',
      '--port',
      '0',
      '--pod',
      'name=a,http=http://127.0.0.1:1',
    ])
    expect(unsigned.code).toBe(2)
    expect(unsigned.stderr).toMatch(/KINFERENCE_SIGNING_SECRETS/)
    const badPod = await runCli([
      'scorer',
      '--port',
      '0',
      '--allow-unsigned',
      '--pod',
      'name=a,url=x',
    ])
    expect(badPod.code).toBe(2)
    expect(badPod.stderr).toMatch(/unknown field "url"/)
    const noPort = await runCli(['scorer'])
    expect(noPort.code).toBe(2)
  })

  it('refuses an unknown --tokenizer, listing the built-ins, and names each bad pool option', async () => {
    const { code, stderr } = await runCli([
      'scorer',
      '--port',
      '0',
      '--allow-unsigned',
      '--pod',
      'name=a,http=http://127.0.0.1:1',
      '--tokenizer',
      'llama3',
      '--max-context',
      'lots',
    ])
    expect(code).toBe(2)
    expect(stderr).toMatch(
      /^kinfctl scorer: --tokenizer: unknown tokenizer "llama3": expected one of qwen3, llama3\.1, gpt-oss, gemma3, deepseek-v3\b.*; --max-context: /,
    )
    expect(stderr).toMatch(/Usage: kinfctl scorer/)
  })
})

describe('kinfctl scorer --pod', () => {
  it('gives a data-parallel pod (dp=) one endpoint per rank, on its ports + rank', () => {
    const spec =
      'name=vllm-0,http=http://10.0.0.1:8000,events=tcp://10.0.0.1:5557,replay=tcp://10.0.0.1:5567,dp=2'
    expect(parsePodSpec(spec, 'default')).toEqual(
      [0, 1].map((rank) => ({
        name: `vllm-0/dp${rank}`,
        http: 'http://10.0.0.1:8000',
        metrics: null,
        events: `tcp://10.0.0.1:${5557 + rank}`,
        replay: `tcp://10.0.0.1:${5567 + rank}`,
        pool: 'default',
        dataParallelRank: rank,
      })),
    )
    expect(parsePodSpec('name=a,http=http://h:1,dp=1', 'default')).toEqual([
      expect.objectContaining({ name: 'a', dataParallelRank: null }),
    ])
  })

  it('refuses a size that is not 1 to 64, and ranks past the last port', () => {
    for (const dp of ['0', '65', 'two', '1.5'])
      expect(() => parsePodSpec(`name=a,http=http://h:1,dp=${dp}`, 'default')).toThrow(
        `dp="${dp}" is not a size from 1 to 64`,
      )
    expect(() =>
      parsePodSpec('name=a,http=http://h:1,events=tcp://h:65535,dp=2', 'default'),
    ).toThrow(/--pod: tcp:\/\/h:65535: port \+ rank 1 is past 65535/)
  })
})
