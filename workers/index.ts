import { Hono } from 'hono'

/**
 * The edge Worker. This holds only what every later route relies on: a health check and
 * OpenAI-shaped errors for unknown routes. Tenancy, quotas, PII labels, policy and the
 * upstreams arrive with the edge itself.
 */
const app = new Hono()

app.get('/healthz', (c) => c.text('ok'))

app.notFound((c) =>
  c.json(
    {
      error: {
        message: `no route for ${c.req.method} ${c.req.path}`,
        type: 'invalid_request_error',
        param: null,
        code: 'not_found',
      },
    },
    404,
  ),
)

export default app
export { QuotaLedgerObject } from './quota-ledger-object.ts'
