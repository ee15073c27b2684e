import { beforeAll, describe, expect, it } from 'vitest'
import { controllerUsage } from '../../../control-plane/kinfctl/commands/controller.ts'
import { edgeUsage, parseEdgeOptions } from '../../../control-plane/kinfctl/commands/edge.ts'
import { scorerUsage } from '../../../control-plane/kinfctl/commands/scorer.ts'
import { edgeVariants } from '../../support/chart-variant-values.ts'
import {
  chartVariants,
  containersOf,
  expandArgs,
  findManifest,
  type Manifest,
  renderChart,
} from '../../support/helm-chart.ts'
import type { Container } from '../../support/manifest-types.ts'
import { redisUrl } from '../../support/redis-test-namespaces.ts'
import { runCli } from '../../support/run-cli.ts'

/**
 * The rendered containers' args go through kinfctl's real option parsers (in-process): an
 * unknown flag, a missing value or a bad duration fails there with a usage error. The
 * controller is stopped by its first check after parsing (no Redis URL given); the scorer
 * is asked to stop at once, so it returns cleanly right after parsing and opening its feed.
 */

/** The env a container would see: literal values, and stand-ins for Secret references. */
function envOf(container: Container, secrets: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    (container.env ?? []).map((env) => [
      env.name,
      env.value ?? secrets[env.name] ?? `<${env.name}>`,
    ]),
  )
}

const flagsOf = (args: string[]) =>
  args.filter((arg) => arg.startsWith('--')).map((arg) => arg.split('=')[0])

describe.each(chartVariants)('container args rendered with $name', ({ options }) => {
  let manifests: Manifest[] = []
  const container = (name: string) => {
    const found = containersOf(findManifest(manifests, 'Deployment', `kinference-${name}`))[0]
    if (!found) throw new Error(`no ${name} container`)
    return found
  }
  beforeAll(async () => {
    manifests = await renderChart(options)
  })

  it('are accepted by kinfctl controller’s parser', async () => {
    const args = container('controller').args ?? []
    expect(args[0]).toBe('controller')
    const result = await runCli(args)
    expect(result.stderr).not.toMatch(/Unknown option|must be|requires an argument/i)
    expect(result.stderr).toContain('--redis (or REDIS_URL) is required')
    for (const flag of flagsOf(args)) expect(controllerUsage, flag).toContain(`${flag} `)
  })

  it('are accepted by kinfctl scorer’s parser, with $(REDIS_URL) expanded as the kubelet does', async () => {
    const scorer = container('scorer')
    const env = envOf(scorer, {
      REDIS_URL: redisUrl,
      KINFERENCE_SIGNING_SECRETS: 'a-signing-secret-of-32-characters',
    })
    const args = expandArgs(scorer.args ?? [], env)
    expect(args[0]).toBe('scorer')
    expect(args).toContain(redisUrl)
    const result = await runCli(args, '', { env, interrupted: async () => {} })
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    for (const flag of flagsOf(args)) expect(scorerUsage, flag).toContain(`${flag} `)
  })
})

describe.each(edgeVariants)('the in-cluster edge’s args rendered with $name', ({ options }) => {
  it('are accepted by kinfctl edge’s parser, with its env as the kubelet builds it', async () => {
    const manifests = await renderChart(options)
    const [container] = containersOf(findManifest(manifests, 'Deployment', 'kinference-edge'))
    if (!container) throw new Error('no edge container')
    const env = envOf(container, {
      REDIS_URL: redisUrl,
      KINFERENCE_SIGNING_SECRET: 'a-signing-secret-of-32-characters',
    })
    const args = expandArgs(container.args ?? [], env)
    expect(args[0]).toBe('edge')
    const edge = parseEdgeOptions(args.slice(1), env)
    expect(edge).toMatchObject({
      host: '0.0.0.0',
      metricsHost: '0.0.0.0',
      scorer: ['http://kinference-scorer.kinference.svc:8080'],
      config: redisUrl,
      signingSecret: 'a-signing-secret-of-32-characters',
      // REDIS_URL also keeps the quotas in Redis, shared by the replicas.
      quotaRedisUrl: redisUrl,
    })
    expect(edge.metricsPort).not.toBe(edge.port)
    for (const flag of flagsOf(args)) expect(edgeUsage, flag).toContain(`${flag} `)
  })
})

describe('expandArgs, the kubelet’s $(VAR) expansion', () => {
  it('substitutes defined variables, keeps unknown ones and unescapes $$', () => {
    expect(expandArgs(['--config', '$(A)', '$(B)', '$$(A)'], { A: 'x' })).toEqual([
      '--config',
      'x',
      '$(B)',
      '$(A)',
    ])
  })
})
