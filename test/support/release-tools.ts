import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { helmPath } from './helm.ts'
import type { BinaryResult } from './layer-binary.ts'

/**
 * Runs .ci/release without a Docker engine, a registry or oras, none of which this machine
 * has: `docker` and `oras` are stand-ins that write down how they were called (and
 * `docker buildx build` writes the metadata file a push would), `helm` is the pinned real
 * Helm (test/support/helm.ts) except `helm push`, which is only written down. What the
 * tests check is what the script asks of those programs; the SBOM and the chart are real.
 */
export const releaseScript = resolve('.ci/release')

/** The digest the stand-in `docker buildx build` says it pushed. */
export const pushedDigest = `sha256:${'ab'.repeat(32)}`

/** One call of a stand-in: the program, the directory it ran in, its arguments. */
export interface ToolCall {
  tool: string
  cwd: string
  args: string[]
}

export interface ReleaseTools {
  dir: string
  env: Record<string, string>
  calls(): ToolCall[]
}

const separator = '\u001f'
const logLine = (tool: string) =>
  `{ IFS=$'\\x1f'; printf '%s\\n' "${tool}${separator}$PWD${separator}$*"; } >> "$RELEASE_TOOL_LOG"`

/** A base image index holding the given platforms, as `imagetools inspect --raw` prints it. */
export function baseIndex(platforms: string[]): string {
  return JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: platforms.map((platform) => {
      const [os, architecture] = platform.split('/')
      return {
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        digest: `sha256:${'0'.repeat(64)}`,
        size: 1,
        platform: { os, architecture },
      }
    }),
  })
}

const scripts = {
  docker: (index: string) => `#!/usr/bin/env bash
${logLine('docker')}
case "$1 $2" in
  "buildx version") echo "github.com/docker/buildx v0.0.0 stand-in" ;;
  "buildx imagetools") cat ${JSON.stringify(index)} ;;
  "buildx build")
    while (($# > 0)); do
      if [[ $1 == --metadata-file ]]; then
        printf '{"containerimage.digest":"${pushedDigest}"}' > "$2"
      fi
      shift
    done ;;
  *) exit 1 ;;
esac
`,
  /** A Docker CLI without the buildx plugin, as this machine's is. */
  dockerWithoutBuildx: () => `#!/usr/bin/env bash
${logLine('docker')}
echo "docker: unknown command: docker $1" >&2
exit 1
`,
  oras: () => `#!/usr/bin/env bash
${logLine('oras')}
`,
  helm: (real: string) => `#!/usr/bin/env bash
${logLine('helm')}
if [[ $1 == push ]]; then exit 0; fi
exec ${JSON.stringify(real)} "$@"
`,
}

/** Stand-in programs in a fresh directory, and the environment naming them. */
export function releaseTools(
  options: { buildx?: boolean; basePlatforms?: string[] } = {},
): ReleaseTools {
  const dir = mkdtempSync(join(tmpdir(), 'kinference-release-tools-'))
  const log = join(dir, 'calls.log')
  const index = join(dir, 'base-index.json')
  writeFileSync(log, '')
  writeFileSync(index, baseIndex(options.basePlatforms ?? ['linux/amd64', 'linux/arm64']))
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text)
    chmodSync(join(dir, name), 0o755)
    return join(dir, name)
  }
  const env = {
    // Node and the system's git, bash, sed and tar; no docker, helm or oras from the machine.
    PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
    // A private home: Helm reads no repositories, plugins or registry logins of the machine.
    HOME: dir,
    KUBECONFIG: join(dir, 'no-kubeconfig'),
    RELEASE_TOOL_LOG: log,
    HELM: write('helm', scripts.helm(helmPath())),
    DOCKER: write(
      'docker',
      options.buildx === false ? scripts.dockerWithoutBuildx() : scripts.docker(index),
    ),
    ORAS: write('oras', scripts.oras()),
  }
  return {
    dir,
    env,
    calls: () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [tool = '', cwd = '', ...args] = line.split(separator)
          return { tool, cwd, args: args.length === 1 && args[0] === '' ? [] : args }
        }),
  }
}

/** Runs .ci/release with the stand-ins, from the repository's root; nothing on its stdin. */
export function runRelease(
  args: string[],
  tools: ReleaseTools,
  env: Record<string, string> = {},
): Promise<BinaryResult> {
  return new Promise((resolve) => {
    execFile(
      releaseScript,
      args,
      { env: { ...tools.env, ...env }, timeout: 60_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
        resolve({ code, stdout, stderr })
      },
    )
  })
}
