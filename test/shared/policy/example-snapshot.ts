import { compileSnapshot } from '../../../shared/config/compile-snapshot.ts'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { KinferenceResource } from '../../../shared/crd/resource.ts'
import type {
  PolicyInput,
  PolicyRequest,
  PoolStatus,
} from '../../../shared/policy/policy-decision.ts'
import { examplesDir, readYamlFolder } from '../../support/read-yaml-documents.ts'

/** The documents of infra/k8s/examples, parsed as resources; `edit` may change them first. */
export function exampleResources(
  edit: (documents: unknown[]) => void = () => {},
): KinferenceResource[] {
  const documents = readYamlFolder(examplesDir).flatMap(({ documents }) => documents)
  edit(documents)
  return documents.map((document) => KinferenceResource.parse(document))
}

/** infra/k8s/examples compiled as `kinfctl compile` does. */
export async function exampleSnapshot(
  edit?: (documents: unknown[]) => void,
): Promise<ConfigSnapshot> {
  const result = await compileSnapshot(exampleResources(edit), 'default')
  if (!result.ok) throw new Error(`examples do not compile: ${JSON.stringify(result.issues)}`)
  return result.snapshot
}

export function request(
  tenant: string,
  model: string,
  more: Partial<Omit<PolicyRequest, 'tenant' | 'model'>> = {},
): PolicyRequest {
  return { tenant, model, promptTokens: 100, labels: [], detectorFailed: false, ...more }
}

/** Pool status by pool name in namespace kinference; pools left out are unknown. */
export function statuses(
  byName: Record<string, Partial<PoolStatus>> = {},
): PolicyInput['poolStatus'] {
  return (poolId) => {
    const [namespace, name] = poolId.split('/')
    const given = namespace === 'kinference' && name !== undefined ? byName[name] : undefined
    if (given === undefined) return undefined
    const saturation = given.saturation ?? 0
    return {
      saturation,
      saturated: given.saturated ?? saturation >= 1,
      predictedTtftMs: given.predictedTtftMs ?? null,
    }
  }
}
