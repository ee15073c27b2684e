import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { chartDir, containersOf, findManifest, parseManifests } from '../../support/helm-chart.ts'
import type { Deployment } from '../../support/manifest-types.ts'
import { runCli } from '../../support/run-cli.ts'

/**
 * The example L40S worker set: vLLM is started with what the scorer depends on (prefix
 * caching, the pool's block size and scheduler limits, KV events on the pool's ports and
 * topic, bound by vLLM), runs on the GPU node group, and carries the labels the pool and
 * the chart's NetworkPolicy select.
 */
const file = join(chartDir, 'examples/vllm-l40s.yaml')
const manifests = parseManifests(readFileSync(file, 'utf8'))
const deployment = findManifest(manifests, 'Deployment', 'vllm-qwen-27b') as unknown as Deployment
const pod = deployment.spec.template.spec
const [vllm] = containersOf(findManifest(manifests, 'Deployment', 'vllm-qwen-27b'))
const args = vllm?.args ?? []
const pool = InferencePoolSpec.parse(findManifest(manifests, 'InferencePool', 'qwen-27b').spec)
const model = pool.models[0]
const chartValues = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'))
const labels = deployment.spec.template.metadata.labels

/** The value of `--name=value` (or true for a bare `--name`). */
const flag = (name: string) => {
  const arg = args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`))
  return arg === undefined ? undefined : arg.includes('=') ? arg.slice(name.length + 3) : true
}
const kvEvents = JSON.parse(String(flag('kv-events-config')))

describe(file, () => {
  it('passes kinfctl validate', async () => {
    const result = await runCli(['validate', '-v', file])
    expect(result.stdout).toMatch(/InferencePool\/qwen-27b is valid/)
    expect(result.stdout).toMatch(/InferenceWorkerSet\/qwen-27b-l40s is valid/)
    expect(result.code, result.stdout + result.stderr).toBe(0)
  })

  it('pins the vLLM release the KV-event wire format was checked against', () => {
    expect(vllm?.image).toBe('vllm/vllm-openai:v0.26.0')
    expect(readFileSync('docs/vllm-wire.md', 'utf8')).toContain('A v0.26.0 capture')
  })

  it('serves the pool’s model with prefix caching, its block size and scheduler limits', () => {
    expect(flag('served-model-name')).toBe(model?.name)
    expect(flag('max-model-len')).toBe(String(model?.maxContextTokens))
    expect(flag('enable-prefix-caching')).toBe(true)
    expect(flag('block-size')).toBe(String(pool.blockSize))
    expect(pool.blockSize).toBe(16)
    expect(flag('max-num-batched-tokens')).toBe(String(pool.scheduler.maxNumBatchedTokens))
    expect(flag('max-num-seqs')).toBe(String(pool.scheduler.maxNumSeqs))
  })

  it('reports the cached tokens the scorer’s index-trust check compares with its prediction', () => {
    // vLLM adds usage.prompt_tokens_details.cached_tokens only with this flag
    // (docs/vllm-wire.md §4); the check reads nothing without it.
    expect(flag('enable-prompt-tokens-details')).toBe(true)
    expect(readFileSync('docs/vllm-wire.md', 'utf8')).toContain('--enable-prompt-tokens-details')
  })

  it('binds the KV-event PUB and replay ROUTER on the pool’s ports, the scorer connecting', () => {
    expect(kvEvents).toMatchObject({ enable_kv_cache_events: true, publisher: 'zmq' })
    // "*" is what makes vLLM bind rather than connect (docs/vllm-wire.md §1.2).
    expect(kvEvents.endpoint).toBe(`tcp://*:${pool.kvEvents?.port}`)
    expect(kvEvents.replay_endpoint).toBe(`tcp://*:${pool.kvEvents?.replayPort}`)
    expect([pool.kvEvents?.port, pool.kvEvents?.replayPort]).toEqual([
      chartValues.vllm.kvEventsPort,
      chartValues.vllm.replayPort,
    ])
    const ports = Object.fromEntries((vllm?.ports ?? []).map((p) => [p.containerPort, p.name]))
    expect(ports).toEqual({ 8000: 'http', 5557: 'kv-events', 5558: 'kv-replay' })
    expect(flag('port')).toBe(String(chartValues.vllm.httpPort))
  })

  it('publishes on the topic the pool expects, with the pod name from the downward API', () => {
    const topic = pool.kvEvents?.topic
      .replace('{pod}', '$(POD_NAME)')
      .replace('{model}', model?.name ?? '')
    expect(kvEvents.topic).toBe(topic)
    const podName = vllm?.env?.find((e) => e.name === 'POD_NAME')
    expect(podName?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name')
  })

  it('runs on one L40S of the g6e GPU node group', () => {
    expect(vllm?.resources?.requests?.['nvidia.com/gpu']).toBe(1)
    expect(vllm?.resources?.limits?.['nvidia.com/gpu']).toBe(1)
    expect(pod.nodeSelector).toMatchObject({
      'nvidia.com/gpu.present': 'true',
      'node.kubernetes.io/instance-type': expect.stringMatching(/^g6e\./),
    })
    expect(pod.tolerations).toContainEqual({
      key: 'nvidia.com/gpu',
      operator: 'Exists',
      effect: 'NoSchedule',
    })
  })

  it('is ready on /health of its HTTP port', () => {
    expect(vllm?.readinessProbe?.httpGet).toEqual({ path: '/health', port: 'http' })
    expect(vllm?.startupProbe?.httpGet?.path).toBe('/health')
  })

  it('carries the labels the pool, the worker set, the Service and the chart select', () => {
    const selectors = [
      pool.selector?.matchLabels,
      (findManifest(manifests, 'InferenceWorkerSet', 'qwen-27b-l40s').spec as typeof pool).selector
        ?.matchLabels,
      (findManifest(manifests, 'Service', 'vllm-qwen-27b').spec as { selector: object }).selector,
      chartValues.vllm.podSelector,
    ]
    for (const selector of selectors) expect(labels).toMatchObject(selector ?? { missing: true })
  })

  it('runs non-root with a read-only root filesystem and no capabilities', () => {
    expect(pod.securityContext?.runAsNonRoot).toBe(true)
    expect(vllm?.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    })
  })
})
