import { readFile } from 'node:fs/promises'
import { parseAllDocuments } from 'yaml'
import { compileSnapshot } from '../../../shared/config/compile-snapshot.ts'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { KinferenceResource } from '../../../shared/crd/resource.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { noWorkloads } from '../../../shared/kube/watched-pod.ts'
import { builtinPlugins, type Plugins } from '../../../shared/plugins.ts'

export const embeddedConfigPath = new URL('../../../infra/k8s/demo/embedded.yaml', import.meta.url)

/**
 * The demo resources with the start-time values filled in, compiled; with `plugins`, a
 * patch may give them the plugins' strategies and conditions.
 */
export async function demoSnapshot(
  bedrockUrl: string,
  keyId: string,
  keySha256: string,
  patch?: (resource: KinferenceResource) => void,
  plugins: Plugins = builtinPlugins,
): Promise<ConfigSnapshot> {
  const documents = parseAllDocuments(await readFile(embeddedConfigPath, 'utf8'))
  const resources = documents.map((doc) => {
    const resource = KinferenceResource.parse(doc.toJS())
    if (resource.kind === 'InferenceProvider' && resource.spec.bedrock)
      resource.spec.bedrock.endpoint = bedrockUrl
    if (resource.kind === 'InferencePolicy')
      for (const tenant of resource.spec.tenants)
        tenant.apiKeys = [{ id: keyId, sha256: keySha256 }]
    patch?.(resource)
    return resource
  })
  const { conditions, strategies } = plugins
  const compiled = await compileSnapshot(resources, 'demo', noWorkloads, conditions, strategies)
  if (!compiled.ok)
    throw new KinfError(
      'invalid_config',
      `demo config: ${compiled.issues.map((i) => i.message).join('; ')}`,
    )
  return compiled.snapshot
}
