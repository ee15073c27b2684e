/** Resources are referred to by name within their namespace; the pair is their id. */
export function resourceId(namespace: string, name: string): string {
  return `${namespace}/${name}`
}
