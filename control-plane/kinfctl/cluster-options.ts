import { delimiter } from 'node:path'
import type { KubeConfig } from '@kubernetes/client-node'
import { loadKubeConfig } from '../controller/load-kube-config.ts'
import type { CliIo } from './cli-io.ts'

/**
 * The options of every kinfctl command that talks to a Kubernetes API server, as kubectl
 * names them: spread into the command's parseArgs options, and `clusterUsage` into its
 * usage text (which `kinfctl completion` reads).
 */
export const clusterOptions = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
} as const

export const clusterUsage = `      --kubeconfig FILE        kubeconfig to use (default: in-cluster service account when
                               running in a pod, else KUBECONFIG or ~/.kube/config)
      --context NAME           the kubeconfig's context to use (default: its current-context)
`

/**
 * The cluster those options name. A pod's service account is used only when neither is
 * given and the pod has no KUBECONFIG: a --context names a context of a kubeconfig.
 * KUBECONFIG is read from `env` (the command's) when it names one file; a list of files
 * is left to client-node, which merges them as kubectl does.
 */
export function clusterConfigOf(
  values: { kubeconfig?: string | undefined; context?: string | undefined },
  env: CliIo['env'],
): KubeConfig {
  const fromEnv = env.KUBECONFIG?.includes(delimiter) === false ? env.KUBECONFIG : undefined
  return loadKubeConfig({
    kubeconfig: values.kubeconfig ?? (fromEnv || null),
    context: values.context ?? null,
    inCluster:
      values.kubeconfig === undefined &&
      values.context === undefined &&
      env.KUBERNETES_SERVICE_HOST !== undefined &&
      env.KUBECONFIG === undefined,
  })
}
