/** The API group and version of every Kinference CRD. */
export const apiGroup = 'kinference.dev'
export const apiVersionName = 'v1alpha1'
export const apiVersion = `${apiGroup}/${apiVersionName}` as const

/** Kubernetes' DNS-1123 label: what a name must be to be referenced from another resource. */
export const dnsLabelPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
