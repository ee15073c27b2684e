import { describe, expect, it } from 'vitest'
import { createRedisSnapshotStore } from '../../../control-plane/config-store/redis-snapshot-store.ts'
import { exitCode } from '../../../control-plane/kinfctl/cli-io.ts'
import { controllerCommand } from '../../../control-plane/kinfctl/commands/controller.ts'
import { publishedOf, yamlObjects } from '../../support/controller/controller-fixture.ts'
import { useControllerCluster } from '../../support/controller/use-controller-cluster.ts'
import { redisUrl, useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'
import { runCli, startCommand } from '../../support/run-cli.ts'

const platform = yamlObjects('infra/k8s/examples/platform.yaml')
const { uniquePrefix } = useRedisTestNamespaces()

/** Every line the command wrote to stderr, each parsed as JSON (throwing if one is not). */
const jsonLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('kinfctl controller’s log', () => {
  const cluster = useControllerCluster(platform)
  const args = (prefix: string) => [
    ...['--kubeconfig', cluster.server.kubeconfigPath, '--namespace', 'kinference'],
    ...['--lease-namespace', 'kinference', '--identity', 'logging-controller'],
    ...['--redis', redisUrl, '--redis-prefix', prefix, '--listen', '127.0.0.1:0'],
    ...['--debounce', '10ms', '--retry-period', '200ms'],
  ]

  it('is one JSON object per stderr line: time, level, service controller, msg, fields', async () => {
    const running = startCommand(controllerCommand, args(uniquePrefix()))
    try {
      await expect
        .poll(() => running.stderr(), { timeout: 20_000, interval: 50 })
        .toMatch(/snapshot version \d+ \(\S+\) published/)
    } finally {
      expect(await running.stop()).toBe(exitCode.ok)
    }
    expect(running.stderr().endsWith('\n')).toBe(true)
    const lines = jsonLines(running.stderr())
    for (const line of lines) {
      expect(Object.keys(line).slice(0, 4)).toEqual(['time', 'level', 'service', 'msg'])
      expect(['debug', 'info', 'warn', 'error']).toContain(line.level)
      expect(line.service).toBe('controller')
      expect(new Date(line.time as string).toISOString()).toBe(line.time)
      expect(line.msg).not.toMatch(/^controller:/)
    }
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        msg: expect.stringMatching(/^logging-controller started; probes and metrics at http:\/\//),
        identity: 'logging-controller',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      }),
    )
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        msg: 'logging-controller is the leader',
        kind: 'Lease',
        namespace: 'kinference',
        name: 'kinference-controller',
        identity: 'logging-controller',
      }),
    )
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        version: expect.any(Number),
        hash: expect.any(String),
      }),
    )
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        msg: 'InferencePool kinference/qwen-27b accepted (generation 1)',
        kind: 'InferencePool',
        namespace: 'kinference',
        name: 'qwen-27b',
      }),
    )
    // What goes to stdout stays the one plain line an operator reads.
    expect(running.stdout()).toMatch(
      /^controller logging-controller running; probes and metrics on /,
    )
  }, 30_000)

  it('KINFERENCE_LOG_LEVEL=warn leaves the info lines out', async () => {
    const prefix = uniquePrefix()
    const store = await createRedisSnapshotStore({ redis: redisUrl, prefix })
    const running = startCommand(controllerCommand, args(prefix), { KINFERENCE_LOG_LEVEL: 'warn' })
    try {
      await expect.poll(() => publishedOf(store), { timeout: 20_000, interval: 50 }).toBeDefined()
    } finally {
      expect(await running.stop()).toBe(exitCode.ok)
      await store.close()
    }
    expect(jsonLines(running.stderr()).filter((line) => line.level === 'info')).toEqual([])
    expect(running.stdout()).toMatch(/running; probes and metrics on /)
  }, 30_000)

  it('an invalid KINFERENCE_LOG_LEVEL is a usage error naming the variable and the levels', async () => {
    const { code, stdout, stderr } = await runCli(['controller', ...args(uniquePrefix())], '', {
      env: { KINFERENCE_LOG_LEVEL: 'verbose' },
    })
    expect(code).toBe(exitCode.usage)
    expect(stdout).toBe('')
    expect(stderr).toMatch(
      /^kinfctl controller: KINFERENCE_LOG_LEVEL must be one of debug, info, warn, error \(got "verbose"\)\n\nUsage: kinfctl controller/,
    )
    // Refused before anything started: no Lease taken, nothing listed.
    expect(cluster.server.requests).toEqual([])
  })
})
