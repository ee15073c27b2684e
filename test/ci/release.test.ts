import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { runHelm } from '../support/helm.ts'
import { chartDir } from '../support/helm-chart.ts'
import type { BinaryResult } from '../support/layer-binary.ts'
import {
  pushedDigest,
  type ReleaseTools,
  releaseTools,
  runRelease,
  type ToolCall,
} from '../support/release-tools.ts'

/**
 * .ci/release, run for real where this machine allows it: the SBOM (cyclonedx-npm) and the
 * chart (the pinned Helm) are made and read back; the image's docker buildx, oras and the
 * pushes go to stand-ins that write down how they were called (release-tools.ts).
 */
const pkg = JSON.parse(readFileSync('package.json', 'utf8'))
const version: string = pkg.version
const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'))
const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8'))
/** The checkout's commit, read after a run: other work may commit in this clone meanwhile. */
const head = async () => (await promisify(execFile)('git', ['rev-parse', 'HEAD'])).stdout.trim()
const dirs: string[] = []
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const callsOf = (tools: ReleaseTools, tool: string, first: string) =>
  tools.calls().filter((call) => call.tool === tool && call.args[0] === first)
/** The value after each occurrence of a flag. */
const flagValues = (call: ToolCall | undefined, flag: string) =>
  (call?.args ?? []).flatMap((arg, i, args) => (arg === flag ? [args[i + 1]] : []))

describe('.ci/release --no-image', () => {
  const dist = tempDir('kinference-release-')
  let tools: ReleaseTools
  let run: BinaryResult

  beforeAll(async () => {
    tools = releaseTools()
    run = await runRelease(['--no-image', '--dist', dist], tools)
  })

  it('makes the SBOM and the chart, and no image', () => {
    expect(run.stderr).not.toMatch(/release: (?!warning)/)
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('image skipped (--no-image)')
    expect(readdirSync(dist).sort()).toEqual([
      `kinference-${version}.cdx.json`,
      `kinference-${version}.tgz`,
    ])
    expect(tools.calls().filter((call) => call.tool !== 'helm')).toEqual([])
    expect(callsOf(tools, 'helm', 'push')).toEqual([])
  })

  it('packages the chart at package.json’s version, deploying that image tag', async () => {
    const chartPackage = join(dist, `kinference-${version}.tgz`)
    const unpacked = tempDir('kinference-chart-')
    await promisify(execFile)('tar', ['-xzf', chartPackage, '-C', unpacked])
    const packaged = parse(readFileSync(join(unpacked, 'kinference', 'Chart.yaml'), 'utf8'))
    expect(packaged.name).toBe('kinference')
    expect(packaged.version).toBe(version)
    expect(packaged.appVersion).toBe(version)
    expect(values.image.tag).toBe(version)

    const lint = await runHelm(['lint', chartPackage, '--kube-version', '1.33.0'])
    expect(lint.stdout + lint.stderr).toContain('0 chart(s) failed')
    expect(lint.code).toBe(0)
    const rendered = await runHelm([
      'template',
      'kinference',
      chartPackage,
      '--namespace',
      'kinference',
      '--kube-version',
      '1.33.0',
    ])
    expect(rendered.stderr).toBe('')
    expect(rendered.code).toBe(0)
    const images = [...rendered.stdout.matchAll(/^\s*image: (\S+)$/gm)].map((m) => m[1])
    expect(images.length).toBeGreaterThan(0)
    expect(new Set(images)).toEqual(new Set([`${values.image.repository}:${version}`]))
    expect(rendered.stdout).toContain(`app.kubernetes.io/version: "${version}"`)
  })

  it('writes a CycloneDX SBOM of the runtime dependencies, without the dev tools', () => {
    const bom = JSON.parse(readFileSync(join(dist, `kinference-${version}.cdx.json`), 'utf8'))
    expect(bom.bomFormat).toBe('CycloneDX')
    expect(bom.specVersion).toMatch(/^1\.\d+$/)
    expect(bom.metadata.component).toMatchObject({ name: 'kinference', version })
    const names = new Set<string>()
    const collect = (components: { group?: string; name: string; components?: [] }[] = []) => {
      for (const c of components) {
        names.add(c.group ? `${c.group}/${c.name}` : c.name)
        collect(c.components)
      }
    }
    collect(bom.components)
    for (const dependency of Object.keys(pkg.dependencies)) expect(names).toContain(dependency)
    for (const dev of ['vitest', '@biomejs/biome', 'typescript', 'wrangler', 'node']) {
      expect(names.has(dev), dev).toBe(false)
    }
  })
})

describe('.ci/release with the image', () => {
  it('builds both platforms, labelled and tagged, and pushes image, SBOM and chart', async () => {
    const dist = tempDir('kinference-release-')
    const tools = releaseTools()
    const run = await runRelease(
      ['--push', '--registry', 'ghcr.io/kinference', '--dist', dist, '--allow-dirty'],
      tools,
    )
    expect(run.stderr).not.toMatch(/release: (?!warning: the working tree)/)
    expect(run.code).toBe(0)
    const commit = await head()
    const repository = 'ghcr.io/kinference/kinfctl'
    expect(repository).toBe(values.image.repository)

    const [inspect] = callsOf(tools, 'docker', 'buildx').filter((c) => c.args[1] === 'imagetools')
    const base = /^FROM (\S+) AS/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1]
    expect(inspect?.args).toEqual(['buildx', 'imagetools', 'inspect', '--raw', base])

    const [build, ...more] = callsOf(tools, 'docker', 'buildx').filter((c) => c.args[1] === 'build')
    expect(more).toEqual([])
    expect(flagValues(build, '--platform')).toEqual(['linux/amd64,linux/arm64'])
    expect(flagValues(build, '--file')).toEqual(['Dockerfile'])
    expect(flagValues(build, '--tag')).toEqual([
      `${repository}:${version}`,
      `${repository}:${commit}`,
    ])
    expect(chart.home).toMatch(/^https:\/\/github\.com\/\S+$/)
    const labels = Object.fromEntries(
      flagValues(build, '--label').map((label = '') => label.split(/=(.*)/s).slice(0, 2)),
    )
    expect(labels).toMatchObject({
      'org.opencontainers.image.source': chart.home,
      'org.opencontainers.image.revision': commit,
      'org.opencontainers.image.version': version,
      'org.opencontainers.image.licenses': pkg.license,
      'org.opencontainers.image.title': 'kinfctl',
    })
    expect(flagValues(build, '--annotation')).toContain(
      `index:org.opencontainers.image.revision=${commit}`,
    )
    expect(build?.args).toContain('--push')
    expect(build?.args.at(-1)).toBe('.')
    expect(build?.cwd).toBe(process.cwd())

    const sbom = `kinference-${version}.cdx.json`
    expect(callsOf(tools, 'oras', 'attach')).toEqual([
      {
        tool: 'oras',
        cwd: dist,
        args: [
          'attach',
          '--artifact-type',
          'application/vnd.cyclonedx+json',
          `${repository}@${pushedDigest}`,
          `${sbom}:application/vnd.cyclonedx+json`,
        ],
      },
    ])
    expect(callsOf(tools, 'helm', 'push').map((call) => call.args)).toEqual([
      ['push', join(dist, `kinference-${version}.tgz`), 'oci://ghcr.io/kinference/charts'],
    ])
    // The image is pushed before the chart that deploys it.
    const order = tools.calls().map((call) => `${call.tool} ${call.args[0]} ${call.args[1]}`)
    expect(order.indexOf('docker buildx build')).toBeGreaterThan(-1)
    expect(order.indexOf('docker buildx build')).toBeLessThan(
      order.findIndex((c) => c.startsWith('helm push')),
    )
  })

  it('without --push keeps the image as an OCI archive and pushes nothing', async () => {
    const dist = tempDir('kinference-release-')
    const tools = releaseTools()
    const run = await runRelease(['--dist', dist], tools)
    expect(run.code).toBe(0)
    const [build] = callsOf(tools, 'docker', 'buildx').filter((c) => c.args[1] === 'build')
    expect(build?.args).not.toContain('--push')
    expect(flagValues(build, '--output')).toEqual([
      `type=oci,dest=${join(dist, `kinfctl-${version}.oci.tar`)}`,
    ])
    expect(callsOf(tools, 'oras', 'attach')).toEqual([])
    expect(callsOf(tools, 'helm', 'push')).toEqual([])
  })

  it('refuses a base image that is not an index of both platforms', async () => {
    const dist = tempDir('kinference-release-')
    const tools = releaseTools({ basePlatforms: ['linux/amd64'] })
    const run = await runRelease(['--dist', dist], tools)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('the base image index lacks linux/arm64')
    expect(readdirSync(dist)).toEqual([])
    expect(callsOf(tools, 'docker', 'buildx').filter((c) => c.args[1] === 'build')).toEqual([])
  })

  it('refuses to push from a working tree with uncommitted changes, unless told', async () => {
    const dist = tempDir('kinference-release-')
    const tools = releaseTools()
    // An empty index: to git every file of the checkout is then an uncommitted change,
    // whatever state this clone is in, and the clone itself is left as it is.
    const dirty = { GIT_INDEX_FILE: join(tempDir('kinference-index-'), 'empty-index') }
    const args = ['--push', '--registry', 'ghcr.io/kinference', '--dist', dist]
    const refused = await runRelease(args, tools, dirty)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(
      /uncommitted changes: a pushed release is labelled with commit [0-9a-f]{40}, so commit/,
    )
    expect(readdirSync(dist)).toEqual([])
    expect(callsOf(tools, 'helm', 'push')).toEqual([])

    const allowed = await runRelease([...args, '--allow-dirty', '--no-image'], tools, dirty)
    expect(allowed.code).toBe(0)
    expect(allowed.stderr).toContain('warning: the working tree has uncommitted changes')
    expect(callsOf(tools, 'helm', 'push')).toHaveLength(1)
  })

  it.each([
    [{ DOCKER: '/nonexistent/docker' }, 'docker not found', {}],
    [{}, 'docker buildx is not available', { buildx: false }],
  ])(
    'fails before building anything when Docker cannot build (%j)',
    async (env, message, options) => {
      const dist = tempDir('kinference-release-')
      const run = await runRelease(['--dist', dist], releaseTools(options), env)
      expect(run.code).toBe(1)
      expect(run.stderr).toContain(message)
      expect(run.stderr).toContain('--no-image')
      expect(readdirSync(dist)).toEqual([])
    },
  )
})

describe('.ci/release on bad input', () => {
  it.each([
    [['--bogus'], 'unknown option: --bogus'],
    [['--push'], '--push needs --registry'],
    [['--push', '--no-image'], '--push needs --registry'],
    [['--registry'], '--registry needs a value'],
    [['--dist', '--no-image'], '--dist needs a value'],
    [
      ['--push', '--registry', 'https://ghcr.io/kinference'],
      '--registry https://ghcr.io/kinference is not a registry path',
    ],
    [
      ['--push', '--registry', 'ghcr.io/Kinference'],
      '--registry ghcr.io/Kinference is not a registry path',
    ],
  ])('%j: says what is wrong and exits 2, making nothing', async (args, message) => {
    const dist = tempDir('kinference-release-')
    const tools = releaseTools()
    const run = await runRelease([...args, '--dist', dist], tools)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(`release: ${message}`)
    expect(run.stderr).toContain('.ci/release --help')
    expect(run.stdout).toBe('')
    expect(tools.calls()).toEqual([])
    expect(readdirSync(dist)).toEqual([])
  })

  it('--help lists every option the script takes', async () => {
    const run = await runRelease(['--help'], releaseTools())
    expect(run.code).toBe(0)
    for (const flag of ['--no-image', '--push', '--registry', '--dist', '--allow-dirty']) {
      expect(run.stdout).toContain(flag)
    }
  })
})
