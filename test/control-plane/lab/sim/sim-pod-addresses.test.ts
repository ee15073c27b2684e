import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { Subscriber } from 'zeromq'
import { createKvEventSubscriber } from '../../../../control-plane/kv-events/create-kv-event-subscriber.ts'
import type { EventBatch } from '../../../../control-plane/kv-events/kv-cache-event.ts'
import { requestReplay } from '../../../../control-plane/kv-events/request-replay.ts'
import { startSimFleet } from '../../../../control-plane/lab/sim/sim-fleet.ts'
import type { SimPod } from '../../../../control-plane/lab/sim/sim-pod.ts'
import { l40s27bFp8 } from '../../../../shared/gpu/gpu-profile.ts'
import { chat, model, startPod, text, until } from '../../../support/sim-pods.ts'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** One pod of its own, as `kinfctl sim --pods 1 --host H --name N --port P --zmq-port Z` starts it. */
async function singlePod(host: string, name: string, port: number, zmqPort: number) {
  const [pod] = await startSimFleet({
    pods: 1,
    names: [name],
    profile: l40s27bFp8,
    modelName: model,
    host,
    port,
    zmqPort,
    timeScale: 50,
    seed: 0,
    eventEncoding: 'map',
  })
  cleanups.push(() => (pod as SimPod).close())
  return pod as SimPod
}

/**
 * Every batch on a pod's PUB socket, whatever its topic, once the subscription is live
 * (a prefix-cache reset is the slow-joiner probe, as in support/sim-pods.ts).
 */
async function listen(pod: SimPod) {
  const batches: { topic: string; batch: EventBatch }[] = []
  const subscriber = createKvEventSubscriber({
    endpoint: pod.kvEventsEndpoint,
    onBatch: (topic, _seq, batch) => batches.push({ topic, batch }),
    onError: (error) => {
      throw error
    },
  })
  cleanups.push(() => subscriber.close())
  for (let probe = 0; batches.length === 0 && probe < 500; probe++) {
    await fetch(`${pod.url}/reset_prefix_cache`, { method: 'POST' })
    await until(() => batches.length > 0, 20).catch(() => {})
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  batches.length = 0
  return batches
}

const storedHashes = (batches: readonly { batch: EventBatch }[]) =>
  batches.flatMap(({ batch }) =>
    batch.events.flatMap((e) => (e.type === 'BlockStored' ? e.blockHashes : [])),
  )

const portOf = (endpoint: string) => Number(endpoint.split(':').at(-1))

/** Whether a SUB socket on `endpoint` gets anything within `ms` while the pod publishes. */
async function hearsOn(endpoint: string, pod: SimPod, ms: number): Promise<boolean> {
  const sub = new Subscriber({ linger: 0, receiveTimeout: ms })
  sub.connect(endpoint)
  sub.subscribe()
  // PUB drops what it sends before the subscription has reached it (a slow joiner on a
  // loaded machine): publish again until something arrives.
  let heard = false
  const poke = async () => {
    while (!heard && !sub.closed) {
      await fetch(`${pod.url}/reset_prefix_cache`, { method: 'POST' }).catch(() => undefined)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
  try {
    void poke()
    await sub.receive()
    heard = true
    return true
  } catch {
    return false
  } finally {
    heard = true
    sub.close()
  }
}

describe('simulated pods on their own addresses', () => {
  it('share HTTP, KV-event and replay ports, each reachable on its own address', async () => {
    // The first pod picks free ports; the second takes the same ones on another address.
    const a = await singlePod('127.0.0.2', 'vllm-a', 0, 0)
    const ports = {
      http: portOf(a.url),
      zmq: portOf(a.kvEventsEndpoint),
      replay: portOf(a.replayEndpoint),
    }
    const b = await startPod({
      podName: 'vllm-b',
      host: '127.0.0.3',
      httpPort: ports.http,
      zmqPort: ports.zmq,
      replayPort: ports.replay,
    })
    cleanups.push(() => b.close())
    expect(a.url).toBe(`http://127.0.0.2:${ports.http}`)
    expect(b.url).toBe(`http://127.0.0.3:${ports.http}`)
    expect(a.kvEventsEndpoint).toBe(`tcp://127.0.0.2:${ports.zmq}`)
    expect(b.kvEventsEndpoint).toBe(`tcp://127.0.0.3:${ports.zmq}`)
    expect(b.replayEndpoint).toBe(`tcp://127.0.0.3:${ports.replay}`)

    for (const [pod, name, seed] of [
      [a, 'vllm-a', 1],
      [b, 'vllm-b', 2],
    ] as const) {
      expect(pod.topic).toBe(`kv@${name}@${model}`)
      const batches = await listen(pod)
      const answer = await chat(pod, {
        messages: [{ role: 'user', content: text(seed, 80) }],
        max_tokens: 2,
      })
      expect(answer.status).toBe(200)
      await until(() => storedHashes(batches).length > 0)
      expect(batches.every(({ topic }) => topic === pod.topic)).toBe(true)
      const replayed = await requestReplay({ endpoint: pod.replayEndpoint, startSeq: 0n })
      expect(replayed.map((r) => r.seq)).toEqual(replayed.map((_, i) => BigInt(i)))
      expect(storedHashes(replayed)).toEqual(expect.arrayContaining(storedHashes(batches)))
    }
    // Neither listens anywhere else: 127.0.0.1 has nothing on these ports.
    await expect(fetch(`http://127.0.0.1:${ports.http}/health`)).rejects.toThrow()
    expect(await hearsOn(`tcp://127.0.0.1:${ports.zmq}`, a, 300)).toBe(false)
    expect(await hearsOn(a.kvEventsEndpoint, a, 5_000)).toBe(true)
  })

  it('binds every interface for 0.0.0.0 and names loopback for clients', async () => {
    const pod = await startPod({ host: '0.0.0.0' })
    cleanups.push(() => pod.close())
    expect(pod.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(pod.kvEventsEndpoint).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/)
    expect(pod.replayEndpoint).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/)
    expect(await hearsOn(`tcp://127.0.0.5:${portOf(pod.kvEventsEndpoint)}`, pod, 5_000)).toBe(true)
    const health = await fetch(`http://127.0.0.5:${portOf(pod.url)}/health`)
    expect(health.status).toBe(200)
  })

  it('keeps its address across a restart', async () => {
    const pod = await startPod({ host: '127.0.0.4' })
    cleanups.push(() => pod.close())
    const before = pod.kvEventsEndpoint
    await pod.restart()
    expect(pod.kvEventsEndpoint).toBe(before)
    expect(await hearsOn(before, pod, 5_000)).toBe(true)
  })
})

describe('kinfctl sim --host --name', () => {
  it('prints endpoints on the host and the pod name it was given', async () => {
    const child = spawn(process.execPath, [
      'control-plane/kinfctl/main.ts',
      'sim',
      ...['--host', '127.0.0.6', '--name', 'vllm-x', '--port', '0', '--zmq-port', '0'],
      ...['--output', 'json'],
    ])
    cleanups.push(async () => child.kill('SIGKILL'))
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    await until(() => out.includes('\n'), 30_000)
    const printed = JSON.parse(out) as Record<string, string>
    expect(printed).toMatchObject({ pod: 'vllm-x', topic: `kv@vllm-x@${model}` })
    expect(printed.http).toMatch(/^http:\/\/127\.0\.0\.6:\d+$/)
    expect(printed.kvEvents).toMatch(/^tcp:\/\/127\.0\.0\.6:\d+$/)
    expect(printed.replay).toMatch(/^tcp:\/\/127\.0\.0\.6:\d+$/)
    child.kill('SIGINT')
    const [code] = await once(child, 'exit')
    expect(code).toBe(0)
  })

  it.each([
    [['--name', 'vllm-x', '--pods', '2'], '--name names one pod: use it with --pods 1'],
    [['--name', 'Vllm_X'], '--name must be a Kubernetes pod name'],
  ])('refuses %j with one line and exit 2', async (args, message) => {
    const child = spawn(process.execPath, ['control-plane/kinfctl/main.ts', 'sim', ...args])
    let err = ''
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
    })
    const [code] = await once(child, 'exit')
    expect(code).toBe(2)
    expect(err.split('\n')[0]).toContain(message)
  })
})
