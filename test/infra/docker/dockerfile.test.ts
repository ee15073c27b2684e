import { execFile } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, posix, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { chartDir } from '../../support/helm-chart.ts'
import {
  importClosure,
  importEdges,
  importSpecifiers,
  labFolder,
  labGateway,
} from '../../support/import-violations.ts'
import { parseDockerfile } from '../../support/parse-dockerfile.ts'

/**
 * The Dockerfile, checked without a Docker engine: what it copies exists and is not
 * ignored, it installs production dependencies from the lockfile on the Node the project
 * pins, runs unprivileged, its entrypoint is the repository's kinfctl, the chart's default
 * image is what it builds, and everything kinfctl loads at run time is in the image, the
 * lab left out (kinfctl's lab commands say so there).
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
/**
 * Whether .dockerignore leaves a path out of the build context: its last matching pattern
 * decides (a `!` pattern keeps), and a pattern naming a folder covers what it holds.
 */
function dockerIgnores(path: string): boolean {
  let verdict = false
  for (const line of ignored) {
    const keep = line.startsWith('!')
    const pattern = new RegExp(
      `^${(keep ? line.slice(1) : line)
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replaceAll('**', '\u0000')
        .replaceAll('*', '[^/]*')
        .replaceAll('?', '[^/]')
        .replaceAll('\u0000', '.*')}(/|$)`,
    )
    if (pattern.test(path)) verdict = !keep
  }
  return verdict
}
const inImage = (file: string) =>
  !dockerIgnores(file) &&
  copied.some(({ source }) => file === source || file.startsWith(`${source}/`))
/** Every file of the build context the final image holds, by repository path. */
const imageFiles = () =>
  copied.flatMap(({ source }) =>
    statSync(source).isDirectory()
      ? readdirSync(source, { recursive: true, encoding: 'utf8' })
          .map((entry) => posix.join(source, entry))
          .filter((file) => statSync(file).isFile() && inImage(file))
      : [source],
  )
/** Where a repository file lands, relative to the image's workdir. */
const toImagePath = (file: string) => {
  const copy = copied.find(({ source }) => file === source || file.startsWith(`${source}/`))
  return posix.relative(workdir, posix.join(copy?.dest ?? '', file.slice(copy?.source.length ?? 0)))
}
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
      expect(stage.image).toMatch(/^node:24\.\d+\.\d+-[a-z]+(-slim)?@sha256:[0-9a-f]{64}$/)
      expect(stage.image).toContain(`node:${nodeVersion}-`)
    }
  })

  it('pins one base image by digest in every stage, the digest docs/release.md records', () => {
    const images = new Set(stages.map((stage) => stage.image))
    expect(stages.length).toBeGreaterThan(1)
    expect(images.size).toBe(1)
    const [base = ''] = images
    const digest = /@(sha256:[0-9a-f]{64})$/.exec(base)?.[1]
    expect(digest).toBeDefined()
    // Where the digest was read is written down beside the instructions to move it.
    expect(read('docs/release.md')).toContain(base)
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
    // All but the lab, which kinfctl's lab commands load on use where it is there.
    const files = importClosure(
      ['control-plane/kinfctl/main.ts'],
      read,
      (edge) => !edge.to.startsWith(labFolder),
    )
    expect(commands).toEqual(expect.arrayContaining(['controller', 'scorer', 'edge', 'inspect']))
    for (const file of files) expect(inImage(file), file).toBe(true)
    for (const file of files) {
      for (const [, asset = ''] of read(file).matchAll(
        /new URL\('([^']+)', import\.meta\.url\)/g,
      )) {
        const target = posix.normalize(posix.join(posix.dirname(file), asset))
        // Left out on purpose: the bench's vendored traces (data/traces), a developer tool,
        // and the lab, whose presence the lab commands check before saying it is not here.
        if (file.includes('/bench/') || file === labGateway) continue
        expect(inImage(target), `${file} reads ${target}`).toBe(true)
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

  it('holds the services and no file of the lab', () => {
    const files = imageFiles()
    expect(files).toContain('control-plane/kinfctl/main.ts')
    expect(files).toContain('shared/routing/pool-router.ts')
    expect(files).toContain('workers/app/edge-app.ts')
    expect(files).toContain('data/chat-templates/qwen3/LICENSE')
    expect(files.filter((file) => file.startsWith('control-plane/lab'))).toEqual([])
    expect(existsSync(join(labFolder, 'commands/bench.ts'))).toBe(true)
  })

  it('kinfctl reaches the lab only through its lab commands, loaded on use', () => {
    const entry = 'control-plane/kinfctl/main.ts'
    const loadedFirst = importClosure([entry], read, (edge) => !edge.dynamic)
    expect(loadedFirst).toContain(labGateway)
    expect([...loadedFirst].filter((file) => file.startsWith(labFolder))).toEqual([])
    const intoLab = [...importClosure([entry], read)].flatMap((file) =>
      file.startsWith(labFolder)
        ? []
        : importEdges(file, read(file)).filter((edge) => edge.to.startsWith(labFolder)),
    )
    expect(intoLab.map((edge) => [edge.from, edge.dynamic])).toEqual([
      [labGateway, true],
      [labGateway, true],
      [labGateway, true],
      [labGateway, true],
    ])
  })
})

/**
 * kinfctl run from the image's files (what the COPY instructions put under the workdir,
 * with this clone's node_modules), without a Docker engine: the user-facing commands work
 * and the lab's commands say where to run them.
 */
describe('kinfctl from the image’s files', () => {
  let root = ''
  const run = async (...args: string[]) => {
    const launcher = join(root, toImagePath(pkg.bin.kinfctl))
    return promisify(execFile)(process.execPath, [launcher, ...args], { cwd: root }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    )
  }

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'kinfctl-image-'))
    for (const file of imageFiles()) {
      const target = join(root, toImagePath(file))
      mkdirSync(dirname(target), { recursive: true })
      cpSync(file, target)
    }
    symlinkSync(resolve('node_modules'), join(root, 'node_modules'), 'dir')
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it.each(['anatomy', 'bench', 'sim', 'up'])(
    'kinfctl %s says it is part of the lab and exits 2',
    async (name) => {
      for (const args of [[name], [name, '--help']]) {
        const { code, stdout, stderr } = await run(...args)
        expect(code).toBe(2)
        expect(stdout).toBe('')
        expect(stderr).toBe(
          `kinfctl ${name} is part of the lab (control-plane/lab/), which this installation leaves out: run it from a clone of the repository\n`,
        )
      }
    },
  )

  it('runs the user-facing commands', async () => {
    const help = await run('--help')
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(
      /Lab commands \(in a clone of the repository, not in the image\):\n {2}sim /,
    )
    const key = await run('key', 'mint', '--tenant', 'acme')
    expect(key.code).toBe(0)
    expect(key.stdout).toMatch(/kinf_[a-z0-9]+_/)
    const valid = await run('validate', '--summary', resolve('infra/k8s/examples'))
    expect(valid.stderr).toBe('')
    expect(valid.code).toBe(0)
  })
})
