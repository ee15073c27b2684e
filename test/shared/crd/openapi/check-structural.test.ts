import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { buildCrd } from '../../../../shared/crd/openapi/build-crd.ts'
import { checkStructural } from '../../../../shared/crd/openapi/check-structural.ts'
import { toStructuralSchema } from '../../../../shared/crd/openapi/to-structural-schema.ts'
import { resourceKinds } from '../../../../shared/crd/resource.ts'

describe('generated CRDs', () => {
  it.each(resourceKinds)(
    '%s is structural, with status subresource and printer columns',
    (kind) => {
      const crd = buildCrd(kind)
      const version = crd.spec.versions[0]
      expect(checkStructural(version?.schema.openAPIV3Schema ?? {})).toEqual([])
      expect(version?.subresources).toEqual({ status: {} })
      expect(version?.additionalPrinterColumns.map((c) => c.name)).toContain('Ready')
      const status = version?.schema.openAPIV3Schema.properties.status as Record<string, any>
      expect(status.properties.conditions['x-kubernetes-list-map-keys']).toEqual(['type'])
    },
  )

  it('documents every spec field', () => {
    const undocumented: string[] = []
    const walk = (node: Record<string, any>, path: string) => {
      for (const [name, child] of Object.entries<Record<string, any>>(node.properties ?? {})) {
        if (!child.description) undocumented.push(`${path}.${name}`)
        walk(child, `${path}.${name}`)
      }
      if (node.items) walk(node.items, `${path}[]`)
    }
    for (const kind of resourceKinds) {
      const spec = buildCrd(kind).spec.versions[0]?.schema.openAPIV3Schema.properties.spec
      walk(spec as Record<string, any>, kind)
    }
    expect(undocumented).toEqual([])
  })
})

describe('checkStructural', () => {
  it('finds each kind of violation', () => {
    const problems = checkStructural({
      type: 'object',
      properties: {
        metadata: { type: 'object', properties: { labels: { type: 'object' } } },
        untyped: { description: 'no type' },
        union: { type: 'string', anyOf: [{ type: 'string' }] },
        both: {
          type: 'object',
          properties: { a: { type: 'string' } },
          additionalProperties: { type: 'string' },
        },
        list: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', properties: { name: { type: 'string' } } },
        },
        noItems: { type: 'array' },
        badEnum: { type: 'integer', enum: ['one'] },
      },
    })
    expect(problems).toEqual([
      '.metadata.labels: only name and generateName may be restricted',
      '.untyped: missing or invalid type undefined',
      '.union: anyOf is not structural here',
      '.both: properties and additionalProperties are mutually exclusive',
      '.list: map key name must be required or defaulted',
      '.noItems: array without items',
      '.badEnum: enum value "one" is not integer',
    ])
  })
})

describe('toStructuralSchema', () => {
  it('refuses unions, which a structural schema cannot express', () => {
    expect(() => toStructuralSchema(z.object({ a: z.union([z.string(), z.number()]) }))).toThrow(
      /anyOf/,
    )
  })

  it('keeps loose objects open and drops zod-only formats', () => {
    const schema = toStructuralSchema(z.looseObject({ path: z.string().startsWith('/') }))
    expect(schema['x-kubernetes-preserve-unknown-fields']).toBe(true)
    expect((schema.properties as Record<string, any>).path.format).toBeUndefined()
  })
})
