import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readSnapshotFile } from '../../../../control-plane/config-store/read-snapshot-file.ts'
import { formatText, validateInputs } from '../../../../control-plane/kinfctl/validation-report.ts'
import {
  benchPoolSpec,
  benchRouterNames,
  benchRoutersOf,
} from '../../../../control-plane/lab/bench/bench-pool-spec.ts'
import { type DesJob, runDesJob } from '../../../../control-plane/lab/bench/des/des-job.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import { ScorerConfig, scorerConfigSchema } from '../../../../control-plane/scorer/scorer-config.ts'
import { compileSnapshot } from '../../../../shared/config/compile-snapshot.ts'
import { validateResources } from '../../../../shared/config/validate-resources.ts'
import { inferencePoolSpecSchema } from '../../../../shared/crd/inference-pool.ts'
import { inferencePoolKind } from '../../../../shared/crd/inference-pool-kind.ts'
import { buildCrd } from '../../../../shared/crd/openapi/build-crd.ts'
import { checkStructural } from '../../../../shared/crd/openapi/check-structural.ts'
import type { OpenApiSchema } from '../../../../shared/crd/openapi/to-structural-schema.ts'
import { noWorkloads } from '../../../../shared/kube/watched-pod.ts'
import type { Plugins } from '../../../../shared/plugins.ts'
import { builtinConditions } from '../../../../shared/policy/conditions/builtin-conditions.ts'
import { createRoutingStrategy } from '../../../../shared/routing/strategies/create-routing-strategy.ts'
import { createKvSnapshotLoader } from '../../../../workers/worker/kv-snapshot-loader.ts'
import { crdValidator } from '../../../support/crd-validator.ts'
import { examplesDir } from '../../../support/read-yaml-documents.ts'
import {
  decisionOf,
  poolSpec,
  type Stack,
  send,
  startStack,
  systemChat,
  words,
} from '../../../support/scorer-stack.ts'
import { toyStrategies, toyStrategyPlugins } from '../../../support/toy-strategy.ts'
import { context, pod, request } from './routing-fixtures.ts'

type Node = OpenApiSchema & { properties: Record<string, Node> }

function poolOpenApi(crd: ReturnType<typeof buildCrd>): Node {
  return crd.spec.versions[0]?.schema.openAPIV3Schema as unknown as Node
}

function routingOf(crd: ReturnType<typeof buildCrd>): Node {
  return poolOpenApi(crd).properties.spec?.properties.routing as Node
}

const pool = (routing: unknown) => ({
  apiVersion: 'kinference.dev/v1alpha1',
  kind: 'InferencePool',
  metadata: {},
  spec: {
    selector: { matchLabels: { app: 'x' } },
    targetPort: 8000,
    models: [{ name: 'm', tokenizer: 'qwen3', maxContextTokens: 4096 }],
    gpuProfile: 'l40s-27b-fp8',
    routing,
  },
})

describe('a strategy registered in one file and one registry line', () => {
  it('is in the InferencePool CRD: the enum, its parameter block, and the CEL rule for it', () => {
    const crd = buildCrd('InferencePool', inferencePoolKind(toyStrategies))
    expect(checkStructural(poolOpenApi(crd))).toEqual([])
    const routing = routingOf(crd)
    expect(routing.properties.strategy?.enum).toEqual([
      'kinference',
      'round-robin',
      'least-request',
      'gie-default',
      'llmd-sticky',
      'dynamo',
      'sglang-cache-aware',
      'pinned',
    ])
    expect(routing.properties.strategy?.description).toMatch(
      /sglang-cache-aware: SGLang cache-aware policy\. pinned: every request to one pod, for tests\.$/,
    )
    expect(routing.properties.pinned).toEqual({
      description: 'Parameters of the pinned strategy.',
      type: 'object',
      properties: {
        podIndex: {
          default: 0,
          description:
            'Position, in name order, of the candidate every request goes to (modulo the candidates).',
          type: 'integer',
          minimum: 0,
          maximum: 1023,
        },
      },
    })
    expect(routing['x-kubernetes-validations']).toContainEqual({
      rule: "!has(self.pinned) || self.strategy == 'pinned'",
      message: 'pinned may only be set when strategy is pinned',
    })
    // The built-in CRD, the one kinfctl crds writes, knows nothing of it.
    expect(JSON.stringify(buildCrd('InferencePool'))).not.toContain('pinned')
  })

  it('is what the API server would accept with that CRD, and a bad parameter is not', () => {
    const validate = crdValidator(
      poolOpenApi(buildCrd('InferencePool', inferencePoolKind(toyStrategies))),
    )
    expect(validate(pool({ strategy: 'pinned', pinned: { podIndex: 2 } }))).toEqual([])
    expect(validate(pool({ strategy: 'pinned', pinned: { podIndex: -1 } }))).not.toEqual([])
    expect(validate(pool({ strategy: 'dynamo', pinned: {} }))).not.toEqual([])
    const builtin = crdValidator(poolOpenApi(buildCrd('InferencePool')))
    expect(builtin(pool({ strategy: 'pinned' }))).not.toEqual([])
  })

  it('routes with its parameters, and only it reads its block', () => {
    const pods = [pod('pod-b'), pod('pod-c'), pod('pod-a')]
    const third = createRoutingStrategy(
      'pinned',
      { pinned: { podIndex: 2 } },
      undefined,
      toyStrategies,
    )
    expect(third.choose(request(), pods, context()).pod).toBe('pod-c')
    const first = createRoutingStrategy('pinned', {}, undefined, toyStrategies)
    expect(first.choose(request(), pods, context()).pod).toBe('pod-a')
    expect(() => createRoutingStrategy('dynamo', { pinned: {} }, undefined, toyStrategies)).toThrow(
      'parameters "pinned" given for strategy "dynamo"',
    )
    expect(() => createRoutingStrategy('pinned')).toThrow('unknown routing strategy "pinned"')
  })
})

describe('kinfctl validate with the registry', () => {
  const folder = mkdtempSync(join(tmpdir(), 'kinf-toy-strategy-'))
  afterAll(() => rmSync(folder, { recursive: true, force: true }))
  cpSync(examplesDir, folder, { recursive: true })
  const platform = join(folder, 'platform.yaml')
  const original = readFileSync(platform, 'utf8')
  const kinferenceRouting = `    strategy: kinference
    kinference:
      speculativeTtlMs: 2000
`
  const withRouting = (routing: string) => {
    expect(original).toContain(kinferenceRouting)
    writeFileSync(platform, original.replace(kinferenceRouting, routing))
  }
  const readStdin = async () => ''

  it('accepts the example policy set with a pool on the toy strategy', async () => {
    withRouting('    strategy: pinned\n    pinned:\n      podIndex: 1\n')
    const report = await validateInputs([folder], 'default', readStdin, {
      strategies: toyStrategies,
    })
    expect(formatText(report, { summary: false, verbose: false })).toBe('')
    expect(report.summary.invalid).toBe(0)
    const pools = report.valid.filter((resource) => resource.kind === 'InferencePool')
    expect(pools.map((resource) => resource.spec.routing)).toContainEqual({
      strategy: 'pinned',
      pinned: { podIndex: 1 },
    })
    // Without the registry line the strategy is unknown, like any misspelt one.
    const builtin = await validateInputs([folder], 'default', readStdin)
    expect(formatText(builtin, { summary: false, verbose: false })).toMatch(
      /platform\.yaml:\d+:\d+: InferencePool\/qwen-27b spec\.routing\.strategy: /,
    )
  })

  it('points a bad parameter at its file, line and field', async () => {
    withRouting('    strategy: pinned\n    pinned:\n      podIndex: -3\n')
    const line = 1 + original.split('\n').indexOf('    strategy: kinference') + 2
    const report = await validateInputs([folder], 'default', readStdin, {
      strategies: toyStrategies,
    })
    expect(formatText(report, { summary: false, verbose: false })).toBe(
      `${platform}:${line}:7: InferencePool/qwen-27b spec.routing.pinned.podIndex: Too small: expected number to be >=0\n`,
    )
  })
})

describe('the DES bench with the registry', () => {
  const assets = loadSimModelAssets()
  const job = (router: string): DesJob => ({
    workloadName: 'tiny',
    data: 'prefix_count=2,prefix_tokens=256,prompt_tokens=64,output_tokens=8',
    profile: 'poisson',
    rate: 4,
    router,
    maxRequests: 12,
    pods: 3,
    gpuProfile: 'l40s-27b-fp8',
    seed: 3,
  })

  it('lists the toy and its variant as routers, before kinference', () => {
    expect([...benchRoutersOf(toyStrategies).keys()].slice(-3)).toEqual([
      'pinned',
      'pinned-third',
      'kinference',
    ])
    expect(benchRouterNames).not.toContain('pinned')
    expect(benchPoolSpec('pinned-third', 'l40s-27b-fp8', toyStrategies).routing).toEqual({
      strategy: 'pinned',
      pinned: { podIndex: 2 },
    })
  })

  it('routes every request where the toy says, with its parameters', async () => {
    const pinned = await runDesJob(job('pinned'), assets, undefined, toyStrategies)
    const third = await runDesJob(job('pinned-third'), assets, undefined, toyStrategies)
    expect(pinned.records).toHaveLength(12)
    expect(new Set(pinned.records.map((record) => record.pod))).toEqual(new Set(['pod-0']))
    expect(new Set(third.records.map((record) => record.pod))).toEqual(new Set(['pod-2']))
    expect(third.config.router).toBe('pinned-third')
    // The same job on a built-in spreads its requests: the toy's decisions are what we saw.
    const roundRobin = await runDesJob(job('round-robin'), assets, undefined, toyStrategies)
    expect(new Set(roundRobin.records.map((record) => record.pod)).size).toBe(3)
    await expect(runDesJob(job('pinned'), assets)).rejects.toThrow('unknown router "pinned"')
  })
})

describe('a real scorer with the registry', () => {
  /** The scorer stack's pool, on the toy: every request to the second pod by name. */
  const pinnedSpec = inferencePoolSpecSchema(toyStrategies).parse({
    ...poolSpec(),
    routing: { strategy: 'pinned', pinned: { podIndex: 1 } },
  })
  let stack: Stack | null = null
  afterAll(() => stack?.close())

  it('routes every request to the pod the toy pins, whatever their prompts', async () => {
    stack = await startStack({ pods: 3, spec: pinnedSpec, plugins: toyStrategyPlugins })
    const pods = await Promise.all(
      [1, 2, 3, 4, 5, 6].map(async (seed) => {
        const answer = await send(
          stack as Stack,
          '/v1/chat/completions',
          systemChat(words(seed, 300), 'q'),
        )
        expect(answer.status).toBe(200)
        return decisionOf(answer.headers).pod
      }),
    )
    expect(new Set(pods)).toEqual(new Set(['sim-pod-1']))
    expect(stack.scorer.pools[0]?.router.strategy).toBe('pinned')
  }, 60_000)

  it('is a config error to a scorer without it', () => {
    const pool = { name: 'default', spec: pinnedSpec }
    const config = { port: 0, signingSecrets: ['x'.repeat(16)], pools: [pool] }
    expect(scorerConfigSchema(toyStrategyPlugins).safeParse(config).success).toBe(true)
    expect(ScorerConfig.safeParse(config).error?.issues[0]?.path).toEqual([
      'pools',
      0,
      'spec',
      'routing',
      'strategy',
    ])
  })
})

describe('snapshots with the registry', () => {
  /** A compiled snapshot whose one pool is on the toy strategy. */
  async function pinnedSnapshot() {
    const document = { ...pool({ strategy: 'pinned', pinned: { podIndex: 1 } }) }
    document.metadata = { name: 'pinned-pool', namespace: 'test' }
    const [check] = validateResources([document], 'test', builtinConditions, toyStrategies)
    if (check?.status !== 'valid') throw new Error(JSON.stringify(check))
    const compiled = await compileSnapshot(
      [check.resource],
      'test',
      noWorkloads,
      builtinConditions,
      toyStrategies,
    )
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues))
    return compiled.snapshot
  }
  const folder = mkdtempSync(join(tmpdir(), 'kinf-toy-snapshot-'))
  afterAll(() => rmSync(folder, { recursive: true, force: true }))

  it('is read from a file, KV or a scorer config with it, and refused without', async () => {
    const snapshot = await pinnedSnapshot()
    expect(snapshot.pools['test/pinned-pool']?.spec.routing).toEqual({
      strategy: 'pinned',
      pinned: { podIndex: 1 },
    })
    const path = join(folder, 'snapshot.json')
    writeFileSync(path, JSON.stringify(snapshot))
    expect((await readSnapshotFile(path, toyStrategyPlugins)).snapshot).toEqual(snapshot)
    await expect(readSnapshotFile(path)).rejects.toThrow('routing.strategy')
    const kv = { get: async () => JSON.stringify(snapshot) }
    const loader = (plugins?: Plugins) =>
      createKvSnapshotLoader(kv, { ttlMs: 0, nowMs: () => 0, ...(plugins && { plugins }) })
    expect(await loader(toyStrategyPlugins)()).toEqual(snapshot)
    await expect(loader()()).rejects.toThrow('routing.strategy')
    const config = { port: 0, signingSecrets: ['x'.repeat(16)], snapshot }
    expect(scorerConfigSchema(toyStrategyPlugins).parse(config).snapshot).toEqual(snapshot)
    expect(ScorerConfig.safeParse(config).success).toBe(false)
  })
})
