import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../support/run-cli.ts'

const workloads = `
apiVersion: v1
kind: Pod
metadata: {name: vllm-0, namespace: kinference, labels: {app: vllm-qwen-27b}}
---
apiVersion: v1
kind: Pod
metadata: {name: vllm-1, namespace: kinference, labels: {app: vllm-qwen-27b}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: vllm-qwen-27b-x, namespace: kinference}
addressType: IPv4
endpoints:
  - addresses: [10.0.0.7]
    conditions: {ready: true}
    targetRef: {kind: Pod, name: vllm-0, namespace: kinference}
  - addresses: [10.0.0.8]
    conditions: {ready: false}
    targetRef: {kind: Pod, name: vllm-1, namespace: kinference}
`

describe('kinfctl compile with Pods and EndpointSlices', () => {
  it('resolves the ready endpoints of each pool as the controller does', async () => {
    const platform = readFileSync('infra/k8s/examples/platform.yaml', 'utf8')
    const result = await runCli(['compile', '-'], `${platform}\n---\n${workloads}`)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('1 endpoints into standard output')
    const snapshot = JSON.parse(result.stdout)
    expect(snapshot.endpoints['kinference/qwen-27b']).toEqual([
      {
        name: 'vllm-0',
        namespace: 'kinference',
        address: '10.0.0.7',
        workerSet: null,
        http: 'http://10.0.0.7:8000',
        metrics: 'http://10.0.0.7:8000/metrics',
        events: 'tcp://10.0.0.7:5557',
        replay: 'tcp://10.0.0.7:5558',
        labels: { app: 'vllm-qwen-27b' },
      },
    ])
    expect(snapshot.endpoints['kinference/qwen-8b']).toEqual([])
  })
})
