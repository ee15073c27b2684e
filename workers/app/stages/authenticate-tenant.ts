import type { Context } from 'hono'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { limitedAuthentication } from '../limit-auth-failures.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'

/**
 * Stage 2: the config snapshot this request is served under, and who sent it: the API key
 * resolved to a tenant (401 in OpenAI's words otherwise), with repeated failures refused
 * per client address and key id (limit-auth-failures.ts). One limiter per app, shared by
 * every route that authenticates.
 */
export function authenticateTenant(options: {
  config: () => Promise<ConfigSnapshot>
  perMinute: number
  nowMs: () => number
  clientAddress: (c: Context) => string | null
}): EdgeStage<never, 'snapshot' | 'identity'> {
  const authenticated = limitedAuthentication(options)
  return edgeStage(
    'authenticateTenant',
    { sets: ['snapshot', 'identity'], span: 'auth' },
    async (c, next) => {
      const snapshot = await options.config()
      c.set('snapshot', snapshot)
      c.set('identity', await authenticated(c, snapshot))
      await next()
    },
  )
}
