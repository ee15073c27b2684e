import { KubeConfig } from '@kubernetes/client-node'
import { KinfError } from '../../shared/errors/kinf-error.ts'

/**
 * The cluster to talk to: `kubeconfig` when given, else the pod's service account when
 * running in a cluster, else the usual KUBECONFIG / ~/.kube/config; with `context`, that
 * context of it instead of its current one (kubectl's --context). Anything unusable is
 * one clear line, never a stack trace.
 */
export function loadKubeConfig(options: {
  kubeconfig: string | null
  inCluster: boolean
  context?: string | null
}): KubeConfig {
  const config = new KubeConfig()
  try {
    if (options.kubeconfig !== null) config.loadFromFile(options.kubeconfig)
    else if (options.inCluster) config.loadFromCluster()
    else config.loadFromDefault()
  } catch (error) {
    const where =
      options.kubeconfig ??
      (options.inCluster ? 'the in-cluster service account' : 'the default kubeconfig')
    throw new KinfError('invalid_config', `cannot load ${where}: ${firstLine(error)}`)
  }
  if (options.context != null) useContext(config, options.context)
  const cluster = config.getCurrentCluster()
  if (!cluster?.server)
    throw new KinfError(
      'invalid_config',
      'the kubeconfig names no current cluster with a server address',
    )
  try {
    new URL(cluster.server)
  } catch {
    throw new KinfError(
      'invalid_config',
      `the kubeconfig's server "${cluster.server}" is not a URL`,
    )
  }
  return config
}

function useContext(config: KubeConfig, context: string): void {
  if (!config.getContextObject(context)) {
    const known = config.getContexts().map((c) => c.name)
    throw new KinfError(
      'invalid_config',
      `the kubeconfig has no context "${context}" (${known.length > 0 ? `it has ${known.join(', ')}` : 'it has none'})`,
    )
  }
  config.setCurrentContext(context)
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n', 1)[0] ?? ''
}
