import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'

export interface KubeconfigOptions {
  /** The bearer token the user sends; the server accepts any token. */
  token?: string
  /** The context's default namespace. */
  namespace?: string
}

let written = 0

/**
 * A kubeconfig for the plain-HTTP server. `insecure-skip-tls-verify` is required:
 * @kubernetes/client-node refuses http:// servers without it.
 */
export function writeKubeconfig(dir: string, server: string, options: KubeconfigOptions): string {
  written += 1
  const path = join(dir, `kubeconfig-${written}.yaml`)
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kube-api-server', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'test-user', user: { token: options.token ?? 'test-token' } }],
    contexts: [
      {
        name: 'kube-api-server',
        context: {
          cluster: 'kube-api-server',
          user: 'test-user',
          ...(options.namespace ? { namespace: options.namespace } : {}),
        },
      },
    ],
    'current-context': 'kube-api-server',
  }
  writeFileSync(path, stringify(config))
  return path
}
