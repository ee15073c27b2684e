import { describe, expect, it } from 'vitest'
import {
  dataParallelEndpoints,
  offsetEndpointPort,
} from '../../../../control-plane/scorer/pools/data-parallel-endpoints.ts'
import { podsOfSnapshot } from '../../../../control-plane/scorer/state/scorer-state.ts'
import {
  compileLiveConfig,
  type LiveDocument,
} from '../../../../shared/config/compile-live-config.ts'
import type { WatchedEndpointSlice, WatchedPod } from '../../../../shared/kube/watched-pod.ts'

const ns = 'kinference'
const apiVersion = 'kinference.dev/v1alpha1'

function pool(kvEvents: object) {
  return {
    apiVersion,
    kind: 'InferencePool',
    metadata: { name: 'qwen', namespace: ns },
    spec: {
      selector: { matchLabels: { app: 'vllm' } },
      targetPort: 8000,
      kvEvents,
      models: [{ name: 'qwen3-8b', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
      gpuProfile: 'l40s-27b-fp8',
    },
  }
}

function workerSet(name: string, dataParallelSize?: number) {
  return {
    apiVersion,
    kind: 'InferenceWorkerSet',
    metadata: { name, namespace: ns },
    spec: {
      poolRef: { name: 'qwen' },
      selector: { matchLabels: { app: 'vllm', set: name } },
      gpu: { type: 'H100', count: 2 },
      ...(dataParallelSize === undefined ? {} : { dataParallelSize }),
    },
  }
}

const live = (values: readonly { kind: string; metadata: { name: string } }[]): LiveDocument[] =>
  values.map((value) => ({ key: `${value.kind}/${ns}/${value.metadata.name}`, value }))

const pod = (name: string, set: string): WatchedPod => ({
  metadata: { name, namespace: ns, labels: { app: 'vllm', set } },
})
const slice: WatchedEndpointSlice = {
  metadata: { name: 'vllm-abc', namespace: ns },
  addressType: 'IPv4',
  endpoints: [
    { name: 'wide-0', ip: '10.0.0.1' },
    { name: 'narrow-0', ip: '10.0.0.2' },
  ].map(({ name, ip }) => ({
    addresses: [ip],
    conditions: { ready: true },
    targetRef: { kind: 'Pod', name, namespace: ns },
  })),
}

async function compileLive(kvEvents: object, dataParallelSize: number) {
  return compileLiveConfig({
    documents: live([pool(kvEvents), workerSet('wide', dataParallelSize), workerSet('narrow')]),
    lastGood: new Map(),
    defaultNamespace: 'default',
    workloads: {
      pods: [pod('wide-0', 'wide'), pod('narrow-0', 'narrow')],
      endpointSlices: [slice],
    },
  })
}
const compile = async (kvEvents: object, dataParallelSize: number) =>
  (await compileLive(kvEvents, dataParallelSize)).result

describe('a worker set of data-parallel pods, compiled and given to the scorer', () => {
  it('keeps one endpoint per pod in the snapshot, with the worker set’s data-parallel size', async () => {
    const result = await compile({ port: 5557, replayPort: 5567 }, 2)
    if (!result.ok) throw new Error(JSON.stringify(result.issues))
    const endpoints = result.snapshot.endpoints[`${ns}/qwen`] ?? []
    expect(endpoints.map((e) => [e.name, e.workerSet, e.dataParallelSize])).toEqual([
      ['narrow-0', 'narrow', undefined],
      ['wide-0', 'wide', 2],
    ])
    // One engine leaves the field out: such a pod's endpoint is what it was before it.
    expect(endpoints[0]).not.toHaveProperty('dataParallelSize')
    // Ready counts are pods, not engines.
    expect(result.resolved.counts[`InferenceWorkerSet/${ns}/wide`]).toEqual({ pods: 1, ready: 1 })
    expect(result.snapshot.workerSets[`${ns}/narrow`]?.spec.dataParallelSize).toBe(1)
  })

  it('gives the scorer one endpoint per rank: its own feed on port + rank, and its rank', async () => {
    const result = await compile({ port: 5557, replayPort: 5567 }, 3)
    if (!result.ok) throw new Error(JSON.stringify(result.issues))
    expect(podsOfSnapshot(result.snapshot)).toEqual([
      {
        name: 'narrow-0',
        pool: `${ns}/qwen`,
        http: 'http://10.0.0.2:8000',
        metrics: 'http://10.0.0.2:8000/metrics',
        events: 'tcp://10.0.0.2:5557',
        replay: 'tcp://10.0.0.2:5567',
        dataParallelRank: null,
      },
      ...[0, 1, 2].map((rank) => ({
        name: `wide-0/dp${rank}`,
        pool: `${ns}/qwen`,
        http: 'http://10.0.0.1:8000',
        metrics: 'http://10.0.0.1:8000/metrics',
        events: `tcp://10.0.0.1:${5557 + rank}`,
        replay: `tcp://10.0.0.1:${5567 + rank}`,
        dataParallelRank: rank,
      })),
    ])
  })

  it('refuses ranks whose event and replay ports overlap or leave the port range', async () => {
    const problems = async (kvEvents: object, size: number) =>
      (await compileLive(kvEvents, size)).verdicts.get(`InferenceWorkerSet/${ns}/wide`)?.problems
    expect(await problems({ port: 5557, replayPort: 5558 }, 2)).toEqual([
      "spec.dataParallelSize: 2 data-parallel ranks publish on the pool's ports + rank: the KV-event ports 5557-5558 and the replay ports 5558-5559 of its pool overlap",
    ])
    expect(await problems({ port: 65_534, replayPort: 5567 }, 4)).toEqual([
      "spec.dataParallelSize: 4 data-parallel ranks publish on the pool's ports + rank: ports 65534 and 5567 + rank up to 3 go past 65535",
    ])
    // Refused, the set is left out (fail static): its pod counts as one engine.
    const refused = await compile({ port: 5557, replayPort: 5558 }, 2)
    if (!refused.ok) throw new Error(JSON.stringify(refused.issues))
    expect(refused.snapshot.endpoints[`${ns}/qwen`]?.map((e) => e.dataParallelSize)).toEqual([
      undefined,
      undefined,
    ])
    // Without replay, or with room between the ranges, it compiles.
    expect(await problems({ port: 5557 }, 8)).toEqual([])
    expect(await problems({ port: 5557, replayPort: 5559 }, 2)).toEqual([])
  })
})

describe('dataParallelEndpoints', () => {
  const base = {
    name: 'p',
    pool: 'default',
    http: 'http://h:8000',
    metrics: null,
    events: 'tcp://h:5557',
    replay: null,
    dataParallelRank: null,
  }

  it('leaves a pod of one engine as it is, and moves ports as vLLM’s offset_endpoint_port', () => {
    expect(dataParallelEndpoints(base, 1)).toEqual([base])
    expect(dataParallelEndpoints(base, 2).map((e) => [e.name, e.events, e.replay])).toEqual([
      ['p/dp0', 'tcp://h:5557', null],
      ['p/dp1', 'tcp://h:5558', null],
    ])
    expect(offsetEndpointPort('tcp://[fd00::1]:5557', 3)).toBe('tcp://[fd00::1]:5560')
  })

  it('refuses sizes below one, ranks of ranks, and ports past 65535', () => {
    expect(() => dataParallelEndpoints(base, 0)).toThrow(/not >= 1/)
    expect(() => dataParallelEndpoints({ ...base, dataParallelRank: 0 }, 2)).toThrow(/already/)
    expect(() => offsetEndpointPort('tcp://h:65535', 1)).toThrow(/past 65535/)
    expect(() => offsetEndpointPort('tcp://h', 1)).toThrow(/no port/)
  })
})
