import { describe, expect, it } from 'vitest'
import {
  type EdgeClaims,
  edgeHeaders,
  signEdgeRequest,
} from '../../../../shared/auth/edge-signature.ts'
import { type RawAnswer, rawUpload } from '../../../support/raw-upload.ts'
import { model, secret, send } from '../../../support/scorer-stack.ts'
import { useSharedStack } from '../../../support/use-scorer-stacks.ts'

const path = '/v1/chat/completions'
const mib = 1024 * 1024
const claims: EdgeClaims = { tenant: 'acme', labels: [], backends: [], allowBurst: false }
const chat = (content: string) =>
  JSON.stringify({ model, max_tokens: 2, messages: [{ role: 'user', content }] })

const sign = (body: Uint8Array | string, overrides: { at?: number; claims?: EdgeClaims } = {}) =>
  signEdgeRequest(
    secret,
    { method: 'POST', path, body, nonce: crypto.randomUUID() },
    overrides.claims ?? claims,
    overrides.at ?? Date.now() / 1000,
  )

function errorOf(answer: RawAnswer | null): { message: string; type: string } {
  expect(answer).not.toBeNull()
  return (JSON.parse(answer?.body ?? '') as { error: { message: string; type: string } }).error
}

const stack = useSharedStack({ pods: 1, maxBodyBytes: 8 * mib })

describe('the scorer refuses what the headers condemn before reading the body', () => {
  /** 30 MiB declared (6 MiB for the limit's case, under the 8 MiB limit otherwise), 64 KiB of it sent. */
  const upload = Buffer.alloc(30 * mib, 0x20)
  const cases: [string, () => Promise<Record<string, string>>, number, RegExp][] = [
    ['no signature', async () => ({}), 401, /missing signature/],
    [
      'a malformed signature',
      async () => ({ ...(await sign(upload)), [edgeHeaders.signature]: 'v4=zz' }),
      401,
      /malformed signature/,
    ],
    [
      'another version',
      async () => {
        const headers = await sign(upload)
        const v3 = headers[edgeHeaders.signature]?.replace(/^v4=/, 'v3=') ?? ''
        return { ...headers, [edgeHeaders.signature]: v3 }
      },
      401,
      /unknown signature version \(this scorer checks v4\)/,
    ],
    [
      'a stale timestamp',
      () => sign(upload, { at: Date.now() / 1000 - 120 }),
      401,
      /outside the allowed window/,
    ],
    [
      'a forged claim',
      async () => ({ ...(await sign(upload)), [edgeHeaders.backends]: 'everything' }),
      401,
      /bad signature/,
    ],
    [
      'a body hash not signed',
      async () => ({ ...(await sign(upload)), [edgeHeaders.bodySha256]: 'f'.repeat(64) }),
      401,
      /bad signature/,
    ],
  ]
  for (const [name, headers, status, reason] of cases)
    it(`${name}: ${status} in OpenAI’s shape, the connection closed, 64 KiB of 30 MiB sent`, async () => {
      const { answer, closedByServer } = await rawUpload({
        url: stack.scorer.url,
        path,
        headers: await headers(),
        declaredBytes: upload.length,
        sendBytes: 64 * 1024,
      })
      // Answered although the body never came: nothing waited to read it.
      expect(answer?.status).toBe(status)
      expect(answer?.headers.connection).toBe('close')
      expect(closedByServer).toBe(true)
      const error = errorOf(answer)
      expect(error.type).toBe('authentication_error')
      expect(error.message).toMatch(reason)
    })

  it('a signed body over maxBodyBytes: 413 before reading it', async () => {
    const { answer, closedByServer } = await rawUpload({
      url: stack.scorer.url,
      path,
      headers: await sign(upload),
      declaredBytes: upload.length,
      sendBytes: 64 * 1024,
    })
    expect(answer?.status).toBe(413)
    expect(answer?.headers.connection).toBe('close')
    expect(closedByServer).toBe(true)
    expect(errorOf(answer).message).toMatch(/over the 8388608-byte limit/)
  })

  it('a signed request without content-length (chunked): refused, its body never finished', async () => {
    const { answer, closedByServer } = await rawUpload({
      url: stack.scorer.url,
      path,
      headers: await sign(upload),
      declaredBytes: 'chunked',
    })
    expect(answer?.status).toBe(401)
    expect(closedByServer).toBe(true)
    expect(errorOf(answer).message).toMatch(/missing or bad content-length/)
  })

  it('a replayed request is refused from its headers, whether its first copy arrived or not', async () => {
    const body = chat('once only')
    const headers = await sign(body)
    const first = await fetch(`${stack.scorer.url}${path}`, { method: 'POST', headers, body })
    expect(first.status).toBe(200)
    await first.text()
    const { answer } = await rawUpload({
      url: stack.scorer.url,
      path,
      headers,
      declaredBytes: Buffer.byteLength(body),
      sendBytes: 0,
    })
    expect(answer?.status).toBe(401)
    expect(answer?.headers.connection).toBe('close')
    expect(errorOf(answer).message).toMatch(/replayed nonce/)
  })
})

describe('a request whose headers check out', () => {
  it('is served end to end, keyed by the request id the edge signed', async () => {
    const id = `edge-${crypto.randomUUID()}`
    const served = await send(stack, path, chat('hello'), { requestId: id })
    expect(served.status).toBe(200)
    // No x-request-id from the client: the pod gets (and the sim echoes) the edge's id.
    expect(served.headers.get('x-request-id')).toBe(id)
    expect(served.headers.get('connection')).not.toBe('close')
  })

  it('is refused (401) when its body is not the one signed, same length', async () => {
    const body = chat('the signed prompt')
    const other = chat('a swapped prompt!')
    expect(Buffer.byteLength(other)).toBe(Buffer.byteLength(body))
    const response = await fetch(`${stack.scorer.url}${path}`, {
      method: 'POST',
      headers: await sign(body),
      body: other,
    })
    expect(response.status).toBe(401)
    expect(await response.text()).toContain('body differs from its signed hash')
  })

  it('is refused (401) when it declares another length than signed', async () => {
    const body = chat('the signed prompt')
    const response = await fetch(`${stack.scorer.url}${path}`, {
      method: 'POST',
      headers: await sign(body),
      body: `${body} `,
    })
    expect(response.status).toBe(401)
    expect(await response.text()).toContain('bad signature')
  })
})

describe('--allow-unsigned (local trials)', () => {
  const unsigned = useSharedStack({ pods: 1, allowUnsigned: true, maxBodyBytes: mib })

  it('serves an unsigned request, and still checks a signed one', async () => {
    const plain = await fetch(`${unsigned.scorer.url}${path}`, {
      method: 'POST',
      body: chat('unsigned'),
    })
    expect(plain.status).toBe(200)
    await plain.text()
    const forged = await fetch(`${unsigned.scorer.url}${path}`, {
      method: 'POST',
      headers: { ...(await sign(chat('signed'))), [edgeHeaders.tenant]: 'other' },
      body: chat('signed'),
    })
    expect(forged.status).toBe(401)
    await forged.text()
  })

  it('bounds an unsigned body by maxBodyBytes, declared or streamed, and closes', async () => {
    const declared = await rawUpload({
      url: unsigned.scorer.url,
      path,
      headers: {},
      declaredBytes: 30 * mib,
      sendBytes: 64 * 1024,
    })
    expect(declared.answer?.status).toBe(413)
    expect(declared.closedByServer).toBe(true)
    const streamed = await rawUpload({
      url: unsigned.scorer.url,
      path,
      headers: {},
      declaredBytes: 'chunked',
      sendBytes: 2 * mib,
    })
    expect(streamed.answer?.status ?? 413).toBe(413)
    expect(streamed.closedByServer).toBe(true)
    expect(streamed.bytesWritten).toBeLessThanOrEqual(2 * mib)
  })
})
