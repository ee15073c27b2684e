import { readFileSync, writeFileSync } from 'node:fs'
import { CoreV1Api } from '@kubernetes/client-node'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'
import { exitCode } from '../../../control-plane/kinfctl/cli-io.ts'
import { clusterConfigOf } from '../../../control-plane/kinfctl/cluster-options.ts'
import { controllerCommand } from '../../../control-plane/kinfctl/commands/controller.ts'
import { startTestCluster } from '../../support/controller/controller-fixture.ts'
import type { KubeApiServer } from '../../support/kube-api-server/start-kube-api-server.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { runCli, startCommand } from '../../support/run-cli.ts'

const { uniquePrefix } = useRedisTestNamespaces()
/** A port nothing listens on: the other context's cluster, unreachable. */
const nowhere = 'http://127.0.0.1:9'

let server: KubeApiServer
let kubeconfig = ''
beforeEach(async () => {
  server = await startTestCluster()
  // The test API server's kubeconfig, with a second context (current) elsewhere.
  const config = parse(readFileSync(server.kubeconfigPath, 'utf8'))
  config.clusters.push({
    name: 'elsewhere',
    cluster: { server: nowhere, 'insecure-skip-tls-verify': true },
  })
  config.contexts.push({ name: 'elsewhere', context: { cluster: 'elsewhere', user: 'test-user' } })
  config['current-context'] = 'elsewhere'
  kubeconfig = server.writeKubeconfig()
  writeFileSync(kubeconfig, stringify(config))
})
afterEach(async () => {
  await server.close()
})

describe('--kubeconfig and --context', () => {
  it('--context picks a context of the kubeconfig, over its current-context', async () => {
    expect(clusterConfigOf({ kubeconfig }, {}).getCurrentCluster()?.server).toBe(nowhere)
    const chosen = clusterConfigOf({ kubeconfig, context: 'kube-api-server' }, {})
    expect(chosen.getCurrentContext()).toBe('kube-api-server')
    expect(chosen.getCurrentCluster()?.server).toBe(server.url)
    server.requests.length = 0
    const namespaces = await chosen.makeApiClient(CoreV1Api).listNamespace()
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain('kinference')
    expect(server.requests.length).toBeGreaterThan(0)
  })

  it('a --context without --kubeconfig is a context of KUBECONFIG, not the pod’s account', () => {
    const env = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBECONFIG: kubeconfig }
    expect(clusterConfigOf({ context: 'kube-api-server' }, env).getCurrentCluster()?.server).toBe(
      server.url,
    )
  })

  it('kinfctl controller --context runs against that context’s cluster', async () => {
    const running = startCommand(controllerCommand, [
      ...['--kubeconfig', kubeconfig, '--context', 'kube-api-server'],
      ...['--redis', redisUrl, '--redis-prefix', uniquePrefix(), '--listen', '127.0.0.1:0'],
      ...['--namespace', 'kinference', '--debounce', '10ms'],
    ])
    try {
      await expect
        .poll(() => running.stdout(), { timeout: 20_000, interval: 50 })
        .toMatch(/^controller \S+ running; probes and metrics on http:\/\/127\.0\.0\.1:\d+/)
      expect(server.requests.some((r) => r.path.includes('/inferencepools'))).toBe(true)
    } finally {
      expect(await running.stop()).toBe(exitCode.ok)
    }
  }, 30_000)

  it('an unknown --context fails with one line naming the contexts there are', async () => {
    const { code, stderr, stdout } = await runCli([
      ...['controller', '--kubeconfig', kubeconfig, '--context', 'nope'],
      ...['--redis', 'redis://127.0.0.1:1'],
    ])
    expect(stdout).toBe('')
    expect(stderr).toBe(
      'kinfctl controller: the kubeconfig has no context "nope" (it has kube-api-server, elsewhere)\n',
    )
    expect(code).toBe(exitCode.invalid)
  })

  it('controller --help documents both', async () => {
    const { stdout } = await runCli(['controller', '--help'])
    expect(stdout).toMatch(/^ {6}--kubeconfig FILE /m)
    expect(stdout).toMatch(/^ {6}--context NAME +the kubeconfig's context to use/m)
  })
})
