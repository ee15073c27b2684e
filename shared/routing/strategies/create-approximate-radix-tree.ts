/**
 * SGLang's approximate multi-tenant radix tree (SGL `sgl-router/src/policies/tree.rs`): one tree
 * of request texts, each node holding the tenants (workers) that were sent text through it and
 * when each last used it. A tenant on a node is on all its ancestors, so the tenants of the
 * deepest node a text reaches are those holding the longest prefix. Characters are UTF-16 code
 * units (Rust counts Unicode scalars; they agree outside the astral planes).
 *
 * Unlike the Rust original, matching and inserting compare in place (no per-step slicing), so a
 * 30,000-character prompt costs one pass, and eviction only visits the tenants over budget.
 */
interface RadixNode {
  text: string
  /** By the first code unit of the child's text. */
  children: Map<number, RadixNode>
  /** Tenant → last access (ms). Insertion order stands in for the Rust map's first key. */
  tenants: Map<string, number>
  parent: RadixNode | null
}

export interface PrefixMatch {
  /** Characters of the longest prefix an eligible tenant holds. */
  matchedChars: number
  /** SGLang's pick: the first eligible tenant of the deepest node reached; null if none. */
  tenant: string | null
  /** For every eligible tenant in the tree, the characters of the prefix it holds. */
  charsByTenant: Map<string, number>
  /** SGLang's `prefix_match` side effect: the tenant's access time along the path. */
  touch(nowMs: number): void
}

export interface ApproximateRadixTree {
  insert(text: string, tenant: string, nowMs: number): void
  matchPrefix(text: string, eligible: ReadonlySet<string>): PrefixMatch
  /** Characters held by `tenant` (SGLang's `tenant_char_count`); 0 when unknown. */
  charCount(tenant: string): number
  /** SGLang's `evict_tenant_by_size`: least recently used leaves first, per tenant over `maxChars`. */
  evictTenantsBySize(maxChars: number): void
  removeTenant(tenant: string): void
  nodeCount(): number
}

function sharedLength(nodeText: string, text: string, offset: number): number {
  const limit = Math.min(nodeText.length, text.length - offset)
  let k = 0
  while (k < limit && nodeText.charCodeAt(k) === text.charCodeAt(offset + k)) k++
  return k
}

function isLeafFor(node: RadixNode, tenant: string): boolean {
  if (!node.tenants.has(tenant)) return false
  for (const child of node.children.values()) if (child.tenants.has(tenant)) return false
  return true
}

interface EvictionEntry {
  at: number
  order: number
  tenant: string
  node: RadixNode
}

function before(a: EvictionEntry, b: EvictionEntry): boolean {
  return a.at < b.at || (a.at === b.at && a.order < b.order)
}

/** A binary min-heap on (access time, push order): the least recently used leaf first. */
function createEvictionHeap() {
  const heap: EvictionEntry[] = []
  let pushed = 0
  const at = (i: number) => heap[i] as EvictionEntry
  return {
    push(entry: Omit<EvictionEntry, 'order'>): void {
      heap.push({ ...entry, order: pushed++ })
      let i = heap.length - 1
      while (i > 0 && before(at(i), at((i - 1) >> 1))) {
        const parent = (i - 1) >> 1
        ;[heap[i], heap[parent]] = [at(parent), at(i)]
        i = parent
      }
    },
    pop(): EvictionEntry | undefined {
      const top = heap[0]
      const last = heap.pop()
      if (top === undefined || last === undefined || heap.length === 0) return top
      heap[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < heap.length && before(at(l), at(m))) m = l
        if (r < heap.length && before(at(r), at(m))) m = r
        if (m === i) return top
        ;[heap[i], heap[m]] = [at(m), at(i)]
        i = m
      }
    },
  }
}

export function createApproximateRadixTree(): ApproximateRadixTree {
  const root: RadixNode = { text: '', children: new Map(), tenants: new Map(), parent: null }
  const charCounts = new Map<string, number>()

  function attach(node: RadixNode, tenant: string, nowMs: number): void {
    if (!node.tenants.has(tenant)) {
      charCounts.set(tenant, (charCounts.get(tenant) ?? 0) + node.text.length)
    }
    node.tenants.set(tenant, nowMs)
  }

  function detach(node: RadixNode, tenant: string): void {
    if (!node.tenants.delete(tenant)) return
    charCounts.set(tenant, Math.max(0, (charCounts.get(tenant) ?? 0) - node.text.length))
    if (node.parent !== null && node.children.size === 0 && node.tenants.size === 0) {
      node.parent.children.delete(node.text.charCodeAt(0))
    }
  }

  function* nodes(): Generator<RadixNode> {
    const stack = [root]
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      yield node
      for (const child of node.children.values()) stack.push(child)
    }
  }

  return {
    insert(text, tenant, nowMs) {
      attach(root, tenant, nowMs)
      let node = root
      let offset = 0
      while (offset < text.length) {
        const first = text.charCodeAt(offset)
        const child = node.children.get(first)
        if (child === undefined) {
          const leaf: RadixNode = {
            text: text.slice(offset),
            children: new Map(),
            tenants: new Map(),
            parent: node,
          }
          node.children.set(first, leaf)
          attach(leaf, tenant, nowMs)
          return
        }
        const shared = sharedLength(child.text, text, offset)
        if (shared < child.text.length) {
          // Split: the shared head keeps the child's tenants; the tail hangs below it.
          const head: RadixNode = {
            text: child.text.slice(0, shared),
            children: new Map([[child.text.charCodeAt(shared), child]]),
            tenants: new Map(child.tenants),
            parent: node,
          }
          node.children.set(first, head)
          child.text = child.text.slice(shared)
          child.parent = head
          attach(head, tenant, nowMs)
          node = head
        } else {
          attach(child, tenant, nowMs)
          node = child
        }
        offset += shared
      }
    },

    matchPrefix(text, eligible) {
      const charsByTenant = new Map<string, number>()
      let offset = 0
      const firstEligible = (node: RadixNode) => {
        let first: string | null = null
        for (const tenant of node.tenants.keys()) {
          if (!eligible.has(tenant)) continue
          first ??= tenant
          charsByTenant.set(tenant, offset)
        }
        return first
      }
      let best = root
      let tenant = firstEligible(root)
      let matchedChars = 0
      let node = root
      while (tenant !== null && offset < text.length) {
        const child = node.children.get(text.charCodeAt(offset))
        if (child === undefined) break
        const shared = sharedLength(child.text, text, offset)
        offset += shared
        const found = firstEligible(child)
        // Ancestors hold every tenant of their descendants: no eligible tenant here, none below.
        if (found === null) break
        best = child
        tenant = found
        matchedChars = offset
        if (shared < child.text.length) break
        node = child
      }
      const chosen = tenant
      return {
        matchedChars: chosen === null ? 0 : matchedChars,
        tenant: chosen,
        charsByTenant,
        touch(nowMs) {
          if (chosen === null) return
          for (let at: RadixNode | null = best; at !== null; at = at.parent) {
            if (at.tenants.has(chosen)) at.tenants.set(chosen, nowMs)
          }
        },
      }
    },

    charCount(tenant) {
      return charCounts.get(tenant) ?? 0
    },

    evictTenantsBySize(maxChars) {
      const over = new Set([...charCounts].filter(([, n]) => n > maxChars).map(([t]) => t))
      if (over.size === 0) return
      const heap = createEvictionHeap()
      for (const node of nodes()) {
        for (const tenant of over) {
          const at = node.tenants.get(tenant)
          if (at !== undefined && isLeafFor(node, tenant)) heap.push({ at, tenant, node })
        }
      }
      for (let entry = heap.pop(); entry !== undefined; entry = heap.pop()) {
        const { tenant, node } = entry
        if ((charCounts.get(tenant) ?? 0) <= maxChars) continue
        if (node.parent === null || !node.tenants.has(tenant)) continue
        detach(node, tenant)
        const parent = node.parent
        const at = parent.tenants.get(tenant)
        if (at !== undefined && isLeafFor(parent, tenant)) heap.push({ at, tenant, node: parent })
      }
    },

    removeTenant(tenant) {
      // Post-order, so a node emptied by its children's removal is removed too.
      const order = [...nodes()].reverse()
      for (const node of order) detach(node, tenant)
      charCounts.delete(tenant)
    },

    nodeCount() {
      let count = 0
      for (const _ of nodes()) count++
      return count
    },
  }
}
