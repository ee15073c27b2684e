import { apiGroup, apiVersionName } from '../api-group.ts'
import { type KindDefinition, kindDefinitions, type ResourceKind } from '../resource.ts'
import { type OpenApiSchema, toStructuralSchema } from './to-structural-schema.ts'

/** A CustomResourceDefinition (apiextensions.k8s.io/v1) as a plain object. */
export type CustomResourceDefinition = ReturnType<typeof buildCrd>

/**
 * The CRD of a kind, from its built-in definition unless given one built with a registry of
 * one's own (inferencePoolKind, inferencePolicyKind).
 */
export function buildCrd(kind: ResourceKind, definition: KindDefinition = kindDefinitions[kind]) {
  const schema = toStructuralSchema(definition.schema)
  const properties = schema.properties as Record<string, OpenApiSchema>
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${definition.plural}.${apiGroup}` },
    spec: {
      group: apiGroup,
      names: {
        kind,
        listKind: `${kind}List`,
        plural: definition.plural,
        singular: kind.toLowerCase(),
        shortNames: definition.shortNames,
        categories: ['kinference'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: apiVersionName,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: definition.printerColumns,
          schema: {
            openAPIV3Schema: {
              description: definition.description,
              type: 'object',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string', description: 'kinference.dev/v1alpha1' },
                kind: { type: 'string', description: kind },
                // The API server owns metadata's schema; a CRD may only say it is an object.
                metadata: { type: 'object' },
                spec: properties.spec,
                status: properties.status,
              },
            },
          },
        },
      ],
    },
  }
}

/** File name kubebuilder would give the CRD: <group>_<plural>.yaml. */
export function crdFileName(kind: ResourceKind): string {
  return `${apiGroup}_${kindDefinitions[kind].plural}.yaml`
}
