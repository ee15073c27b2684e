/**
 * workerd's built-in `cloudflare:workers` for Node tests that import the Worker entry
 * (vitest.config.ts aliases the module to this file in the node project). Only the base
 * class the entry's Durable Object extends; nothing here runs a Durable Object.
 */
export abstract class DurableObject<Env = unknown> {
  protected ctx: unknown
  protected env: Env

  constructor(ctx: unknown, env: Env) {
    this.ctx = ctx
    this.env = env
  }
}
