/**
 * workerd's built-in modules as the Node type-check (tsconfig.json) sees them: test files
 * and the Worker entry reach workers/ code that imports them. workers/tsconfig.json checks
 * that code against the real declarations (worker-configuration.d.ts); these are loose on
 * purpose and declare only what tests use.
 */
declare module 'cloudflare:workers' {
  export abstract class DurableObject<Env = unknown> {
    protected ctx: any
    protected env: Env
    constructor(ctx: any, env: Env)
  }
  /** The test Worker's bindings (wrangler.toml). */
  export const env: Record<string, unknown>
}

declare module 'cloudflare:test' {
  /** Tears the object's instance down; its durable storage stays. */
  export function evictDurableObject(stub: unknown): Promise<void>
}
