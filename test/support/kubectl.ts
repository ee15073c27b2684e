import { type BinaryResult, layerBinaryPath, runBinary } from './layer-binary.ts'

/** kubectl v1.33.0 from the pinned layer package (layer-binary.ts says where from). */
export type KubectlResult = BinaryResult

export interface KubectlOptions {
  kubeconfig: string
  /** kubectl caches discovery under $HOME/.kube/cache: give each server its own. */
  home: string
  stdin?: string
  timeoutMs?: number
}

/** The path of the kubectl binary, extracted from the layer zip on first use. */
export function kubectlPath(): string {
  return layerBinaryPath('kubectl')
}

/** Runs kubectl against a kubeconfig with a private HOME and no inherited environment. */
export function runKubectl(args: string[], options: KubectlOptions): Promise<KubectlResult> {
  return runBinary(kubectlPath(), ['--kubeconfig', options.kubeconfig, ...args], {
    env: { HOME: options.home },
    ...(options.stdin !== undefined && { stdin: options.stdin }),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
  })
}
