import { describe, expect, it } from 'vitest'
import { validateResources } from '../../../../shared/config/validate-resources.ts'
import { buildCrd } from '../../../../shared/crd/openapi/build-crd.ts'
import {
  isResourceKind,
  kindDefinitions,
  type ResourceKind,
  resourceKinds,
} from '../../../../shared/crd/resource.ts'
import { crdValidator } from '../../../support/crd-validator.ts'
import { brokenDir, examplesDir, readYamlFolder } from '../../../support/read-yaml-documents.ts'

const validators = Object.fromEntries(
  resourceKinds.map((kind) => [
    kind,
    crdValidator(buildCrd(kind).spec.versions[0]?.schema.openAPIV3Schema ?? {}),
  ]),
) as Record<ResourceKind, (value: unknown) => string[]>

/** The API server validates metadata itself; the CRD only types it as an object. */
function withoutMetadata(value: unknown): unknown {
  return { ...(value as object), metadata: {} }
}

describe('the generated CRD schemas agree with the zod schemas', () => {
  const examples = readYamlFolder(examplesDir).flatMap(({ file, documents }) =>
    documents.map((document, i) => ({ label: `${file}#${i}`, document })),
  )

  it.each(examples)('both accept $label', ({ document }) => {
    const kind = (document as { kind: ResourceKind }).kind
    expect(kindDefinitions[kind].schema.safeParse(document).success).toBe(true)
    expect(validators[kind](document)).toEqual([])
  })

  const schemaMistakes = readYamlFolder(brokenDir).flatMap(({ file, documents }) =>
    documents.flatMap((document, i) => {
      const [check] = validateResources([document], 'default')
      const kind = (document as { kind?: unknown } | null)?.kind
      if (check?.status !== 'invalid' || !isResourceKind(kind)) return []
      // Only mistakes within one document's spec: metadata and references are not the CRD's job.
      const inSpec = check.issues.filter(
        (issue) => issue.path[0] === 'spec' && issue.reason.startsWith('FieldValue'),
      )
      return inSpec.length > 0 ? [{ label: `${file}#${i}`, document, kind }] : []
    }),
  )

  it('finds schema mistakes among the broken fixtures', () => {
    expect(schemaMistakes.length).toBeGreaterThanOrEqual(7)
  })

  it.each(schemaMistakes)('both reject $label', ({ document, kind }) => {
    expect(kindDefinitions[kind].schema.safeParse(document).success).toBe(false)
    expect(validators[kind](withoutMetadata(document))).not.toEqual([])
  })
})
