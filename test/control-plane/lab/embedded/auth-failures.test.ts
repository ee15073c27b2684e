import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { start } from '../../../support/embedded-stack.ts'

/** On Node the address is the socket's: loopback here, so every request shares it. */
describe('the Node edge limits failed authentications by the socket address', () => {
  let stack: EmbeddedStack
  beforeAll(async () => {
    stack = await start()
  }, 60_000)
  afterAll(() => stack?.close())

  it('turns 401s into 429s for the address past 20 failures a minute', async () => {
    const models = (key: string) =>
      fetch(`${stack.edge.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
    expect((await models(stack.demoKey)).status).toBe(200)
    const statuses: number[] = []
    for (let i = 0; i < 20; i++)
      statuses.push((await models(`kinf_guess${i}_${'x'.repeat(32)}`)).status)
    expect(statuses.slice(0, 19).every((status) => status === 401)).toBe(true)
    expect(statuses[19]).toBe(429)
    const refused = await models(stack.demoKey)
    expect(refused.status).toBe(429)
    const { error } = (await refused.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('rate_limit_exceeded')
    expect(error.message).toMatch(/^Too many failed authentications; retry in \d+ s\.$/)
  })
})
