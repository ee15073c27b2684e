import { createHash } from 'node:crypto'
import type { ConfigSnapshot } from '../../../../shared/config/config-snapshot.ts'
import {
  kinference,
  podObject,
  sliceObject,
} from '../../../../test/support/controller/controller-fixture.ts'
import type {
  KubeApiServer,
  KubeObject,
} from '../../../../test/support/kube-api-server/start-kube-api-server.ts'
import type { RunningScorer } from '../../../scorer/start-scorer.ts'

export const benchNamespace = 'kinference'

/** How big the cluster is: the 50 pools of 20 pods and 100 policies by default. */
export interface BenchShape {
  pools: number
  podsPerPool: number
  policies: number
}

export const changeKinds = ['endpoint-add', 'endpoint-remove', 'policy', 'pool'] as const
export type ChangeKind = (typeof changeKinds)[number]

/** One write to the API server, and how to tell a snapshot that carries it. */
export interface BenchChange {
  kind: ChangeKind
  target: string
  carries: (snapshot: ConfigSnapshot) => boolean
  /**
   * The scorer's live pools show it: a pod joins a kept pool's router before its feed's
   * replay, which applySnapshot waits for. Null when only the hash tells (policies).
   */
  inScorer: ((scorer: RunningScorer) => boolean) | null
}

interface BenchPod {
  name: string
  ip: string
}

const poolName = (i: number) => `pool-${i}`
const backendName = (i: number) => `backend-${i}`
const policyName = (j: number) => `policy-${j}`
/** Pools 2k and 2k+1 serve the same model, so one rule can route to both backends. */
const modelOf = (i: number) => `model-${Math.floor(i / 2)}`
const poolId = (i: number) => `${benchNamespace}/${poolName(i)}`
const policyId = (j: number) => `${benchNamespace}/${policyName(j)}`
const livePool = (scorer: RunningScorer, i: number) =>
  scorer.pools.find((pool) => pool.id === poolId(i))

/**
 * The benchmark's cluster in the test API server, written through its object store, and
 * the model of it the benchmark keeps (pods per pool, quotas, thresholds) so each change
 * knows what it changed and what the snapshot must say afterwards.
 */
export class BenchCluster {
  private readonly server: KubeApiServer
  private readonly shape: BenchShape
  private readonly pods: BenchPod[][] = []
  private readonly quotas: number[] = []
  private readonly thresholds: number[] = []
  private nextPod = 0

  constructor(server: KubeApiServer, shape: BenchShape) {
    this.server = server
    this.shape = shape
  }

  /** Every pool, backend, policy, pod and slice, all valid. */
  seed(): void {
    for (let i = 0; i < this.shape.pools; i++) {
      this.thresholds.push(5)
      this.create('inferencepools', poolObject(i, 5))
      this.create('gatewaybackends', backendObject(i))
      this.pods.push([])
      for (let k = 0; k < this.shape.podsPerPool; k++) this.addPodTo(i)
      this.createCore('discovery.k8s.io/v1', 'endpointslices', this.slice(i))
    }
    for (let j = 0; j < this.shape.policies; j++) {
      this.quotas.push(600)
      this.create('inferencepolicies', policyObject(j, this.shape.pools, 600))
    }
  }

  /** What the first snapshot must hold. */
  expected() {
    return {
      pools: this.shape.pools,
      policies: this.shape.policies,
      endpoints: this.pods.reduce((sum, list) => sum + list.length, 0),
    }
  }

  /** Makes one change of `kind` to an object `random` picks. */
  change(kind: ChangeKind, random: () => number): BenchChange {
    if (kind === 'endpoint-add') return this.addEndpoint(this.pick(this.shape.pools, random))
    if (kind === 'endpoint-remove') return this.removeEndpoint(random)
    if (kind === 'policy') return this.changeQuota(this.pick(this.shape.policies, random), random)
    return this.changeThreshold(this.pick(this.shape.pools, random), random)
  }

  private addEndpoint(i: number): BenchChange {
    const pod = this.addPodTo(i)
    this.replaceCore('discovery.k8s.io/v1', 'endpointslices', this.slice(i))
    return {
      kind: 'endpoint-add',
      target: `${poolName(i)}/${pod.name}`,
      carries: (s) => (s.endpoints[poolId(i)] ?? []).some((e) => e.name === pod.name),
      inScorer: (scorer) => livePool(scorer, i)?.endpoint(pod.name) !== undefined,
    }
  }

  /** From a pool that keeps at least one endpoint: the slice first, then the Pod, as on a scale-down. */
  private removeEndpoint(random: () => number): BenchChange {
    const candidates = this.pods.flatMap((list, i) => (list.length > 1 ? [i] : []))
    const i = candidates[this.pick(candidates.length, random)] as number
    const list = this.pods[i] as BenchPod[]
    const [pod] = list.splice(this.pick(list.length, random), 1) as [BenchPod]
    this.replaceCore('discovery.k8s.io/v1', 'endpointslices', this.slice(i))
    this.server.objects.delete('v1', 'pods', benchNamespace, pod.name)
    return {
      kind: 'endpoint-remove',
      target: `${poolName(i)}/${pod.name}`,
      carries: (s) => !(s.endpoints[poolId(i)] ?? []).some((e) => e.name === pod.name),
      inScorer: (scorer) => livePool(scorer, i)?.endpoint(pod.name) === undefined,
    }
  }

  private changeQuota(j: number, random: () => number): BenchChange {
    const quota = this.different(this.quotas[j] as number, 100, 10_000, random)
    this.quotas[j] = quota
    this.replace('inferencepolicies', policyObject(j, this.shape.pools, quota))
    return {
      kind: 'policy',
      target: `${policyName(j)} requestsPerMinute=${quota}`,
      carries: (s) => s.policies[policyId(j)]?.spec.tenants[0]?.quotas?.requestsPerMinute === quota,
      inScorer: null,
    }
  }

  private changeThreshold(i: number, random: () => number): BenchChange {
    const threshold = this.different(this.thresholds[i] as number, 2, 64, random)
    this.thresholds[i] = threshold
    this.replace('inferencepools', poolObject(i, threshold))
    return {
      kind: 'pool',
      target: `${poolName(i)} queueDepthThreshold=${threshold}`,
      carries: (s) => s.pools[poolId(i)]?.spec.saturation.queueDepthThreshold === threshold,
      inScorer: (scorer) => livePool(scorer, i)?.spec.saturation.queueDepthThreshold === threshold,
    }
  }

  private addPodTo(i: number): BenchPod {
    const n = this.nextPod++
    // 10.<pool>.<n / 250>.<n % 250 + 1>: unique, and never a network or broadcast address.
    const pod = {
      name: `${poolName(i)}-p${n}`,
      ip: `10.${i % 250}.${Math.floor(n / 250)}.${(n % 250) + 1}`,
    }
    this.pods[i]?.push(pod)
    this.createCore('v1', 'pods', podObject(pod.name, benchNamespace, { app: poolName(i) }, pod.ip))
    return pod
  }

  private slice(i: number): KubeObject {
    return sliceObject(`${poolName(i)}-abcde`, benchNamespace, this.pods[i] ?? [])
  }

  private pick(n: number, random: () => number): number {
    return Math.min(n - 1, Math.floor(random() * n))
  }

  private different(current: number, min: number, max: number, random: () => number): number {
    const value = min + this.pick(max - min, random)
    return value === current ? value + 1 : value
  }

  private create(plural: string, object: KubeObject) {
    this.server.objects.create(kinference, plural, object)
  }

  private createCore(apiVersion: string, plural: string, object: KubeObject) {
    this.server.objects.create(apiVersion, plural, object)
  }

  /** A PUT without a resourceVersion, as `kubectl replace` does after a read. */
  private replace(plural: string, object: KubeObject) {
    this.server.objects.update(kinference, plural, object)
  }

  private replaceCore(apiVersion: string, plural: string, object: KubeObject) {
    this.server.objects.update(apiVersion, plural, object)
  }
}

function poolObject(i: number, queueDepthThreshold: number): KubeObject {
  return {
    apiVersion: kinference,
    kind: 'InferencePool',
    metadata: { name: poolName(i), namespace: benchNamespace },
    spec: {
      selector: { matchLabels: { app: poolName(i) } },
      targetPort: 8000,
      kvEvents: { port: 5557, replayPort: 5558 },
      // The pods are unroutable: a slow scrape keeps the scorer's failing scrapes rare.
      metrics: { intervalMs: 60_000 },
      models: [{ name: modelOf(i), tokenizer: 'qwen3', maxContextTokens: 32768 }],
      gpuProfile: 'l40s-27b-fp8',
      saturation: { queueDepthThreshold },
    },
  }
}

function backendObject(i: number): KubeObject {
  return {
    apiVersion: kinference,
    kind: 'GatewayBackend',
    metadata: { name: backendName(i), namespace: benchNamespace },
    spec: { target: { pool: { name: poolName(i), model: modelOf(i) } }, locality: 'InCluster' },
  }
}

/** Its own tenant and key; the pair of pools of one model, then one pool for the rest. */
function policyObject(j: number, pools: number, requestsPerMinute: number): KubeObject {
  const pair = (2 * j) % pools
  const other = (j * 7 + 1) % pools
  const secret = createHash('sha256').update(`bench-secret-${j}`).digest('hex')
  return {
    apiVersion: kinference,
    kind: 'InferencePolicy',
    metadata: { name: policyName(j), namespace: benchNamespace },
    spec: {
      tenants: [
        {
          name: `tenant-${j}`,
          apiKeys: [{ id: `key${String(j).padStart(4, '0')}`, sha256: secret }],
          quotas: { requestsPerMinute, tokensPerMinute: 200_000 },
          models: ['*'],
        },
      ],
      rules: [
        {
          name: 'pair',
          match: { models: [modelOf(pair)] },
          action: {
            route: { backends: [pair, pair + 1].filter((i) => i < pools).map(backendName) },
          },
        },
        { name: 'rest', match: {}, action: { route: { backends: [backendName(other)] } } },
      ],
    },
  }
}
