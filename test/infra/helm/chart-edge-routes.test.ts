import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  chartDir,
  findManifest,
  type Manifest,
  renderChart,
  templateChart,
} from '../../support/helm-chart.ts'

/**
 * What sends clients to the in-cluster edge: an HTTPRoute (gateway.networking.k8s.io/v1)
 * and an Ingress, as configured in ci/gateway-values.yaml, each to a port the edge's
 * Service has. Render-only: the test API server has neither kind.
 */
interface ServiceSpec {
  ports: { name: string; port: number }[]
}
interface HttpRouteSpec {
  parentRefs: Record<string, string>[]
  hostnames?: string[]
  rules: {
    matches: { path: { type: string; value: string } }[]
    backendRefs: { name: string; port: number; group?: string; kind?: string }[]
  }[]
}
interface IngressSpec {
  ingressClassName?: string
  tls?: { secretName: string; hosts: string[] }[]
  rules: {
    host: string
    http: {
      paths: {
        path: string
        pathType: string
        backend: { service: { name: string; port: { name?: string; number?: number } } }
      }[]
    }
  }[]
}

describe('the HTTPRoute and Ingress of ci/gateway-values.yaml', () => {
  let manifests: Manifest[] = []
  let service: ServiceSpec
  beforeAll(async () => {
    manifests = await renderChart({ valuesFile: join(chartDir, 'ci/gateway-values.yaml') })
    service = findManifest(manifests, 'Service', 'kinference-edge').spec as ServiceSpec
  })

  it('attach the edge Service to the Gateway’s listener, for its hostnames, every path', () => {
    const route = findManifest(manifests, 'HTTPRoute', 'kinference-edge')
    expect(route.apiVersion).toBe('gateway.networking.k8s.io/v1')
    expect(route.metadata.namespace).toBe('kinference')
    const spec = route.spec as HttpRouteSpec
    expect(spec.parentRefs).toEqual([
      { name: 'inference-gateway', namespace: 'gateway-system', sectionName: 'https' },
    ])
    expect(spec.hostnames).toEqual(['chat.example.com'])
    expect(spec.rules).toEqual([
      {
        matches: [{ path: { type: 'PathPrefix', value: '/' } }],
        backendRefs: [{ name: 'kinference-edge', port: 80 }],
      },
    ])
    // A backendRef without group and kind is a core Service: the edge's, on a port it has.
    expect(service.ports.map((p) => p.port)).toContain(spec.rules[0]?.backendRefs[0]?.port)
  })

  it('route the Ingress’s hosts to the edge Service’s named port, with the TLS given', () => {
    const ingress = findManifest(manifests, 'Ingress', 'kinference-edge')
    expect(ingress.apiVersion).toBe('networking.k8s.io/v1')
    expect((ingress.metadata as { annotations?: object }).annotations).toEqual({
      'nginx.ingress.kubernetes.io/proxy-read-timeout': '300',
    })
    const spec = ingress.spec as IngressSpec
    expect(spec.ingressClassName).toBe('nginx')
    expect(spec.tls).toEqual([
      { secretName: 'chat-internal-tls', hosts: ['chat-internal.example.com'] },
    ])
    expect(spec.rules).toEqual([
      {
        host: 'chat-internal.example.com',
        http: {
          paths: [
            {
              path: '/',
              pathType: 'Prefix',
              backend: { service: { name: 'kinference-edge', port: { name: 'http' } } },
            },
          ],
        },
      },
    ])
    expect(service.ports.map((p) => p.name)).toContain('http')
  })
})

describe('routes the chart refuses', () => {
  it('an HTTPRoute without parentRefs, an Ingress without hosts (the schema)', async () => {
    const route = await templateChart({
      set: { 'edge.enabled': 'true', 'edge.httpRoute.enabled': 'true' },
    })
    expect(route.code).not.toBe(0)
    expect(route.stderr).toContain('edge.httpRoute.parentRefs: Array must have at least 1 items')
    const ingress = await templateChart({
      set: { 'edge.enabled': 'true', 'edge.ingress.enabled': 'true' },
    })
    expect(ingress.code).not.toBe(0)
    expect(ingress.stderr).toContain('edge.ingress.hosts: Array must have at least 1 items')
  })

  it('a route while the edge is off, which it would route to', async () => {
    const result = await templateChart({
      set: { 'edge.ingress.enabled': 'true', 'edge.ingress.hosts[0]': 'chat.example.com' },
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('set edge.enabled too')
  })
})
