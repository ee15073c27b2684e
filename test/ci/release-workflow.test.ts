import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { runHelm } from '../support/helm.ts'
import { chartDir } from '../support/helm-chart.ts'
import { releaseTools, runRelease } from '../support/release-tools.ts'

/**
 * The tag workflow, .github/workflows/release.yml, read as GitHub reads it: what starts it,
 * what it may write, the tools it sets up before the release, and its release command,
 * which is run here (with the stand-ins of release-tools.ts) to show the script takes it.
 */
interface Step {
  name?: string
  uses?: string
  run?: string
  with?: Record<string, string | number>
  env?: Record<string, string>
}
const workflow = parse(readFileSync('.github/workflows/release.yml', 'utf8'))
const pkg = JSON.parse(readFileSync('package.json', 'utf8'))
const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'))
const job = workflow.jobs.release
const steps: Step[] = job.steps
const action = (name: string) => steps.findIndex((step) => step.uses?.split('@')[0] === name)
const runs = (pattern: RegExp) => steps.findIndex((step) => pattern.test(step.run ?? ''))
const releaseStep = steps[runs(/\.ci\/release/)]

/** The release command's words, the job's environment put in as the shell would. */
function releaseArgs(): string[] {
  const line = (releaseStep?.run ?? '').split('\n').find((l) => l.startsWith('.ci/release')) ?? ''
  const [script, ...words] = line.trim().split(/\s+/)
  expect(script).toBe('.ci/release')
  return words.map((word) =>
    word.replace(/^"(.*)"$/, '$1').replace(/\$(\w+)|\$\{(\w+)\}/g, (_, a, b) => {
      const value = job.env?.[a ?? b]
      expect(value, `${a ?? b} is set in the job`).toBeDefined()
      return value
    }),
  )
}

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe('.github/workflows/release.yml', () => {
  it('runs on v* tags only, allowed to write packages and nothing else', () => {
    expect(Object.keys(workflow.on)).toEqual(['push'])
    expect(workflow.on.push).toEqual({ tags: ['v*'] })
    expect(workflow.permissions).toEqual({ contents: 'read', packages: 'write' })
    expect(Object.keys(workflow.jobs)).toEqual(['release'])
    expect(job.permissions).toBeUndefined()
  })

  it('sets up Node 24, the dependencies, QEMU, buildx, ghcr.io, Helm and oras, then releases', async () => {
    const order = [
      action('actions/checkout'),
      action('actions/setup-node'),
      runs(/^npm ci$/),
      action('docker/setup-qemu-action'),
      action('docker/setup-buildx-action'),
      action('docker/login-action'),
      action('azure/setup-helm'),
      runs(/helm registry login ghcr\.io/),
      action('oras-project/setup-oras'),
      runs(/\.ci\/release/),
    ]
    for (const index of order) expect(index).toBeGreaterThan(-1)
    expect(order).toEqual([...order].sort((a, b) => a - b))
    for (const step of steps) if (step.uses) expect(step.uses).toMatch(/@v\d+$/)

    expect(steps[action('actions/setup-node')]?.with?.['node-version']).toBe(24)
    expect(pkg.engines.node).toBe('>=24 <25')
    expect(steps[action('docker/login-action')]?.with).toEqual({
      registry: 'ghcr.io',
      username: `\${{ github.actor }}`,
      password: `\${{ secrets.GITHUB_TOKEN }}`,
    })
    // The Helm the tests run is the Helm that packages and pushes the chart.
    const helm = await runHelm(['version', '--short'])
    expect(helm.stdout).toMatch(/^v\d+\.\d+\.\d+/)
    expect(helm.stdout.startsWith(`${steps[action('azure/setup-helm')]?.with?.version}+`)).toBe(
      true,
    )
  })

  it('pushes to the registry the chart’s default image names', () => {
    const args = releaseArgs()
    expect(args).toContain('--push')
    const registry = args[args.indexOf('--registry') + 1]
    expect(`${registry}/kinfctl`).toBe(values.image.repository)
  })

  it('runs a release command .ci/release accepts, pushing the image, its SBOM and the chart', async () => {
    const dist = mkdtempSync(join(tmpdir(), 'kinference-release-'))
    dirs.push(dist)
    const tools = releaseTools()
    // --allow-dirty: the workflow releases a clean checkout, this clone may not be one.
    const run = await runRelease([...releaseArgs(), '--dist', dist, '--allow-dirty'], tools)
    expect(run.stderr).not.toMatch(/release: (?!warning: the working tree)/)
    expect(run.code).toBe(0)
    const calls = tools.calls().map((call) => `${call.tool} ${call.args.slice(0, 2).join(' ')}`)
    expect(calls).toContain('docker buildx build')
    expect(calls).toContain(`oras attach --artifact-type`)
    expect(calls).toContain(`helm push ${join(dist, `kinference-${pkg.version}.tgz`)}`)
    // What the run keeps as its artifact: the chart and the SBOM it made.
    const kept = steps[action('actions/upload-artifact')]?.with?.path ?? ''
    expect(String(kept)).toMatch(/dist\/\*\.tgz/)
    expect(String(kept)).toMatch(/dist\/\*\.cdx\.json/)
  })

  it.each([
    [`v${pkg.version}`, 0],
    ['v0.0.0-not-this', 1],
  ])('refuses a tag that is not package.json’s version (%s exits %i)', async (tag, code) => {
    const check = steps.find((step) => step.run?.includes('GITHUB_REF_NAME'))?.run ?? 'exit 9'
    const exit = await new Promise<number>((resolve) =>
      execFile(
        'bash',
        ['-eo', 'pipefail', '-c', check],
        { env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, GITHUB_REF_NAME: tag } },
        (error) => resolve(error === null ? 0 : Number(error.code)),
      ),
    )
    expect(exit).toBe(code)
  })
})
