import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'

export const e2eNamespace = 'kinference'
export const e2eModel = 'qwen3.8-27b-fp8'

/** The ports every simulated pod of the pool listens on, each on its own 127.0.0.x. */
export interface PoolPorts {
  http: number
  events: number
  replay: number
}

/** The pool, a backend to it, and a policy for one tenant: what the end-to-end tests apply. */
export function e2ePlatform(ports: PoolPorts): object[] {
  return [
    {
      apiVersion: 'kinference.dev/v1alpha1',
      kind: 'InferencePool',
      metadata: { name: 'e2e', namespace: e2eNamespace },
      spec: {
        selector: { matchLabels: { app: 'vllm-e2e' } },
        targetPort: ports.http,
        kvEvents: { port: ports.events, replayPort: ports.replay },
        models: [{ name: e2eModel, tokenizer: 'qwen3', maxContextTokens: 32768 }],
        gpuProfile: 'l40s-27b-fp8',
        // Round robin spreads distinct requests over every pod, so each one's traffic shows.
        routing: { strategy: 'round-robin' },
      },
    },
    {
      apiVersion: 'kinference.dev/v1alpha1',
      kind: 'GatewayBackend',
      metadata: { name: 'e2e-local', namespace: e2eNamespace },
      spec: { target: { pool: { name: 'e2e', model: e2eModel } }, locality: 'InCluster' },
    },
  ]
}

/** A policy routing the tenant to the pool; with `maxPromptTokens`, longer prompts get 413. */
export function e2ePolicy(
  keySha256: string,
  options: { maxPromptTokens?: number; backend?: string } = {},
) {
  const reject = options.maxPromptTokens
    ? [
        {
          name: 'prompt-cap',
          match: { promptTokens: { min: options.maxPromptTokens + 1 } },
          action: {
            reject: {
              status: 413,
              code: 'prompt_too_long',
              message: 'Prompt too long for this test.',
            },
          },
        },
      ]
    : []
  return {
    apiVersion: 'kinference.dev/v1alpha1',
    kind: 'InferencePolicy',
    metadata: { name: 'e2e', namespace: e2eNamespace },
    spec: {
      // The tests read which pod served a request from the routing headers.
      decisionHeaders: 'Visible',
      tenants: [
        { name: 'e2e-tenant', apiKeys: [{ id: 'e2ekey', sha256: keySha256 }], models: ['*'] },
      ],
      rules: [
        ...reject,
        {
          name: 'local',
          match: {},
          action: { route: { backends: [options.backend ?? 'e2e-local'] } },
        },
      ],
    },
  }
}

export function e2ePod(name: string, ip: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: e2eNamespace, labels: { app: 'vllm-e2e' } },
    spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0' }] },
    status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] },
  }
}

export function e2eSlice(pods: readonly { name: string; ip: string }[], ports: PoolPorts) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'vllm-e2e-abcde',
      namespace: e2eNamespace,
      labels: { 'kubernetes.io/service-name': 'vllm-e2e' },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: ports.http, protocol: 'TCP' }],
    endpoints: pods.map((pod) => ({
      addresses: [pod.ip],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', name: pod.name, namespace: e2eNamespace },
    })),
  }
}

/** Writes objects as a multi-document YAML manifest for kubectl apply; returns its path. */
export function manifest(dir: string, name: string, objects: readonly object[]): string {
  const path = join(dir, `${name}.yaml`)
  writeFileSync(path, objects.map((object) => stringify(object)).join('---\n'))
  return path
}
