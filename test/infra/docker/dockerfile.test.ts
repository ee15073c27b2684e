import { existsSync, readFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { chartDir } from '../../support/helm-chart.ts'
import { importClosure, importSpecifiers } from '../../support/import-violations.ts'
import { parseDockerfile } from '../../support/parse-dockerfile.ts'

/**
 * The Dockerfile, checked without a Docker engine: what it copies exists and is not
 * ignored, it installs production dependencies from the lockfile on the Node the project
 * pins, runs unprivileged, its entrypoint is the repository's kinfctl, the chart's default
 * image is what it builds, and everything kinfctl loads at run time is in the image.
 */
const dockerfile = readFileSync('Dockerfile', 'utf8')
const stages = parseDockerfile(dockerfile)
const final = stages.at(-1)
const pkg = JSON.parse(readFileSync('package.json', 'utf8'))
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'))
const ignored = readFileSync('.dockerignore', 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))
const read = (file: string) => readFileSync(file, 'utf8')
const of = (keyword: string) => (final?.instructions ?? []).filter((i) => i.keyword === keyword)
const workdir = of('WORKDIR').at(-1)?.args[0] ?? '/'

/** Where each repository path lands in the final image (COPY from the build context). */
const copied = of('COPY')
  .filter((copy) => copy.flags.from === undefined)
  .flatMap((copy) => {
    const written = copy.args.at(-1) ?? ''
    const dest = posix.resolve(workdir, written)
    const sources = copy.args.slice(0, -1)
    return sources.map((source) => ({
      source: posix.normalize(source),
      dest: sources.length > 1 || written.endsWith('/') ? posix.join(dest, source) : dest,
    }))
  })
const inImage = (file: string) =>
  copied.some(({ source }) => file === source || file.startsWith(`${source}/`))
const toRepoPath = (path: string) => {
  const copy = copied
    .filter(({ dest }) => path === dest || path.startsWith(`${dest}/`))
    .sort((a, b) => b.dest.length - a.dest.length)[0]
  return copy ? join(copy.source, path.slice(copy.dest.length)) : undefined
}

/** Packages a set of files imports at run time (type-only imports are erased by Node). */
function packagesOf(files: Iterable<string>): Set<string> {
  const packages = new Set<string>()
  for (const file of files) {
    const runtime = read(file).replace(
      /^\s*(import|export)\s+type\s[^;]*?from\s*['"][^'"]+['"]/gm,
      '',
    )
    for (const specifier of importSpecifiers(runtime)) {
      if (specifier.startsWith('.') || specifier.startsWith('node:')) continue
      const parts = specifier.split('/')
      packages.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? ''))
    }
  }
  return packages
}
const commandFile = (name: string) => `control-plane/kinfctl/commands/${name}.ts`
const commands = [
  ...read('control-plane/kinfctl/run-kinfctl.ts').matchAll(
    /import\(\s*'\.\/commands\/([a-z-]+)\.ts'\s*\)/g,
  ),
].map((m) => m[1] ?? '')
describe('Dockerfile', () => {
  it('builds on the official Node image of the major and version the project pins', () => {
    const nodeVersion = lock.packages['node_modules/node'].version as string
    expect(pkg.engines.node).toBe('>=24 <25')
    for (const stage of stages) {
      expect(stage.image).toMatch(/^node:24\.\d+\.\d+-[a-z]+(-slim)?$/)
      expect(stage.image).toContain(`node:${nodeVersion}-`)
    }
  })

  it('installs production dependencies from the lockfile, copied before npm ci runs', () => {
    const build = stages[0]?.instructions ?? []
    const install = build.findIndex(
      (i) => i.keyword === 'RUN' && /\bnpm ci --omit=dev\b/.test(i.text),
    )
    const manifest = build.findIndex(
      (i) =>
        i.keyword === 'COPY' &&
        i.args.includes('package.json') &&
        i.args.includes('package-lock.json'),
    )
    expect(install).toBeGreaterThan(-1)
    expect(manifest).toBeGreaterThan(-1)
    expect(manifest).toBeLessThan(install)
    expect(
      of('COPY').some((c) => c.flags.from === stages[0]?.name && c.args[0] === '/app/node_modules'),
    ).toBe(true)
  })

  it('copies only paths that exist and that .dockerignore keeps', () => {
    const sources = stages.flatMap((stage) =>
      stage.instructions
        .filter((i) => i.keyword === 'COPY' && !i.flags.from)
        .flatMap((i) => i.args.slice(0, -1)),
    )
    expect(sources.length).toBeGreaterThan(3)
    for (const source of sources) {
      expect(existsSync(source), source).toBe(true)
      for (const pattern of ignored)
        expect(source.startsWith(pattern), `${source} vs ${pattern}`).toBe(false)
    }
    for (const secret of ['.dev.vars', '.git', 'node_modules']) expect(ignored).toContain(secret)
  })

  it('runs as the unprivileged user the chart’s securityContext names', () => {
    const user = of('USER').at(-1)?.args[0]
    // The official image's "node" user is uid 1000.
    expect(user).toBe('node')
    expect(read(join(chartDir, 'templates/_helpers.tpl'))).toContain('runAsUser: 1000')
  })

  it('enters through the repository’s kinfctl launcher', () => {
    const [runtime, script = ''] = of('ENTRYPOINT').at(-1)?.args ?? []
    expect(runtime).toBe('node')
    const file = toRepoPath(script)
    expect(file).toBe(pkg.bin.kinfctl)
    expect(existsSync(file ?? '')).toBe(true)
    expect(read(file ?? '')).toContain("await import('./main.ts')")
  })

  it('is the image the chart deploys by default, tagged with the version', () => {
    const values = parse(read(join(chartDir, 'values.yaml')))
    const chart = parse(read(join(chartDir, 'Chart.yaml')))
    const built = /docker build -t (\S+) \./.exec(dockerfile)?.[1]
    expect(built).toBe(`${values.image.repository}:${values.image.tag}`)
    expect(values.image.tag).toBe(chart.appVersion)
    expect(chart.appVersion).toBe(pkg.version)
  })

  it('holds every file kinfctl loads at run time, code and data', () => {
    const files = importClosure(['control-plane/kinfctl/main.ts'], read)
    expect(commands).toEqual(expect.arrayContaining(['controller', 'scorer', 'edge', 'up']))
    for (const file of files) expect(inImage(file), file).toBe(true)
    for (const file of files) {
      for (const [, asset = ''] of read(file).matchAll(
        /new URL\('([^']+)', import\.meta\.url\)/g,
      )) {
        const target = posix.normalize(posix.join(posix.dirname(file), asset))
        // Left out on purpose: the bench's vendored traces (data/traces), a developer tool.
        if (!file.includes('/bench/')) expect(inImage(target), `${file} reads ${target}`).toBe(true)
      }
    }
  })

  it.each(commands)(
    'kinfctl %s imports at run time only packages npm ci --omit=dev installs',
    (name) => {
      const devOnly = [...packagesOf(importClosure([commandFile(name)], read))].filter(
        (name) => pkg.dependencies[name] === undefined,
      )
      for (const dep of devOnly) expect(pkg.devDependencies, dep).toHaveProperty(dep)
      // `npm ci --omit=dev` leaves these out: the command would fail in the image.
      expect(devOnly.sort()).toEqual([])
    },
  )
})
