import { canonicalJson } from '../config/canonical-json.ts'
import type { ConfigSnapshot } from '../config/config-snapshot.ts'

const sections = [
  'pools',
  'workerSets',
  'providers',
  'backends',
  'policies',
  'endpoints',
  'tenants',
] as const
export type SnapshotSection = (typeof sections)[number]

export interface SnapshotChange {
  section: SnapshotSection
  /** The resource id (or tenant name, or pool id for endpoints). */
  id: string
  change: 'added' | 'removed' | 'changed'
}

/** What differs from `before` to `after`, section by section, by id; [] when equal. */
export function snapshotChanges(before: ConfigSnapshot, after: ConfigSnapshot): SnapshotChange[] {
  return sections.flatMap((section) => {
    const a: Record<string, unknown> = before[section]
    const b: Record<string, unknown> = after[section]
    const ids = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()
    return ids.flatMap((id): SnapshotChange[] => {
      if (!Object.hasOwn(a, id)) return [{ section, id, change: 'added' }]
      if (!Object.hasOwn(b, id)) return [{ section, id, change: 'removed' }]
      return canonicalJson(a[id]) === canonicalJson(b[id])
        ? []
        : [{ section, id, change: 'changed' }]
    })
  })
}
