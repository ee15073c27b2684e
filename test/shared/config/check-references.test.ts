import { describe, expect, it } from 'vitest'
import { checkReferences } from '../../../shared/config/check-references.ts'
import { KinferenceResource } from '../../../shared/crd/resource.ts'

const tenant = (name: string, id: string) => ({
  name,
  apiKeys: [{ id, sha256: 'a'.repeat(64) }],
  models: ['*'],
})
const reject = { reject: { status: 403, message: 'no' } }

function policy(rules: { name: string; match: object }[]) {
  return KinferenceResource.parse({
    apiVersion: 'kinference.dev/v1alpha1',
    kind: 'InferencePolicy',
    metadata: { name: 'p', namespace: 'kinference' },
    spec: {
      tenants: [tenant('a', 'keya'), tenant('b', 'keyb')],
      rules: rules.map((rule) => ({ ...rule, action: reject })),
    },
  })
}

describe('checkReferences on rule conditions', () => {
  it('reports the tenants and pools a rule’s conditions name that do not exist', () => {
    const { issues } = checkReferences(
      [policy([{ name: 'r', match: { tenants: ['a', 'c'], pool: { name: 'gone' } } }])],
      'default',
    )
    expect(issues).toEqual([
      {
        resource: 0,
        path: ['spec', 'rules', 0, 'match', 'tenants', 1],
        reason: 'NotFound',
        message: 'tenant "c" is not a tenant of this policy',
      },
      {
        resource: 0,
        path: ['spec', 'rules', 0, 'match', 'pool', 'name'],
        reason: 'NotFound',
        message: 'InferencePool "gone" not found in namespace "kinference"',
        target: { kind: 'InferencePool', namespace: 'kinference', name: 'gone' },
      },
    ])
  })

  it('reports a rule every request of which an earlier terminal rule takes', () => {
    const { issues } = checkReferences(
      [
        policy([
          { name: 'small', match: { models: ['m', 'n'], promptTokens: { max: 100 } } },
          { name: 'smaller', match: { models: ['m'], promptTokens: { min: 1, max: 50 } } },
          { name: 'other', match: { models: ['m'], labels: { any: ['pii'] } } },
        ]),
      ],
      'default',
    )
    expect(issues).toEqual([
      {
        resource: 0,
        path: ['spec', 'rules', 1, 'name'],
        reason: 'Unreachable',
        message:
          'rule "smaller" is unreachable: the earlier rule "small" matches every request it matches',
      },
    ])
  })
})
