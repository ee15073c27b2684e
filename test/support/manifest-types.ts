/** The fields of rendered Kubernetes manifests that the chart's tests read, and no more. */

export interface LabelSelector {
  matchLabels?: Record<string, string>
  matchExpressions?: unknown[]
}

export interface Probe {
  httpGet?: { path: string; port: number | string }
  periodSeconds?: number
  failureThreshold?: number
}

export interface EnvVar {
  name: string
  value?: string
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean }
    fieldRef?: { fieldPath: string }
  }
}

export interface Container {
  name: string
  image: string
  command?: string[]
  args?: string[]
  env?: EnvVar[]
  ports?: { name?: string; containerPort: number; protocol?: string }[]
  resources?: {
    requests?: Record<string, string | number>
    limits?: Record<string, string | number>
  }
  startupProbe?: Probe
  readinessProbe?: Probe
  livenessProbe?: Probe
  lifecycle?: { preStop?: { sleep?: { seconds: number }; exec?: unknown } }
  securityContext?: {
    runAsNonRoot?: boolean
    readOnlyRootFilesystem?: boolean
    allowPrivilegeEscalation?: boolean
    privileged?: boolean
    capabilities?: { drop?: string[]; add?: string[] }
  }
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[]
}

export interface Volume {
  name: string
  emptyDir?: { sizeLimit?: string }
  configMap?: { name: string }
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean }
  hostPath?: { path: string; type?: string }
}

export interface PodSpec {
  containers: Container[]
  initContainers?: Container[]
  serviceAccountName?: string
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number }
  terminationGracePeriodSeconds?: number
  nodeSelector?: Record<string, string>
  tolerations?: { key?: string; operator?: string; effect?: string }[]
  volumes?: Volume[]
}

export interface Deployment {
  kind: 'Deployment'
  metadata: { name: string; namespace?: string }
  spec: {
    replicas?: number
    selector: LabelSelector
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec }
  }
}

export interface PolicyRule {
  apiGroups: string[]
  resources: string[]
  verbs: string[]
  resourceNames?: string[]
}

export interface NetworkPolicyPeer {
  podSelector?: LabelSelector
  namespaceSelector?: LabelSelector
  ipBlock?: { cidr: string }
}

export interface NetworkPolicyPort {
  protocol?: string
  port: number
  endPort?: number
}

export interface NetworkPolicy {
  metadata: { name: string; namespace?: string }
  spec: {
    podSelector: LabelSelector
    policyTypes: string[]
    ingress?: { from?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[]
    egress?: { to?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[]
  }
}
