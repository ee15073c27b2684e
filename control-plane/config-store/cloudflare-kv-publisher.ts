import { z } from 'zod'
import { canonicalJson } from '../../shared/config/canonical-json.ts'
import { verifySnapshot } from '../../shared/config/compile-snapshot.ts'
import { type ConfigSnapshot, snapshotSchemaOf } from '../../shared/config/config-snapshot.ts'
import { functionOption, parseOptions } from '../../shared/config/parse-options.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { PluginsOption } from '../../shared/plugins.ts'
import { kvSnapshotKey as snapshotKey } from '../../shared/protocol/kv-snapshot-key.ts'
import {
  type CloudflareApiFailure,
  cloudflareApiFailure,
  cloudflareUnreachable,
} from './cloudflare-api-failure.ts'

const CloudflareId = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a Cloudflare id (letters, digits, dashes)')

export const CloudflareKvPublisherOptions = z.strictObject({
  accountId: CloudflareId,
  namespaceId: CloudflareId.describe('The KV namespace bound as CONFIG (wrangler.toml)'),
  apiToken: z.string().min(1).describe('A token with Workers KV Storage: Edit on the account'),
  baseUrl: z.url().default('https://api.cloudflare.com/client/v4'),
  fetch: functionOption<typeof fetch>().default(() => fetch),
  timeoutMs: z.int().positive().default(10_000).describe('Per request'),
  plugins: PluginsOption,
})
export type CloudflareKvPublisherOptionsInput = z.input<typeof CloudflareKvPublisherOptions>

/** KV's limit on a value (25 MiB); checked here so the answer is clear, not a 413. */
const maxValueBytes = 25 * 1024 * 1024

export type KvPublishResult = { ok: true; key: string; bytes: number } | CloudflareApiFailure

/** What is stored under the key: the text (null when absent) and its metadata. */
export type KvReadResult =
  | { ok: true; value: string | null; metadata: unknown }
  | CloudflareApiFailure

export interface CloudflareKvPublisher {
  /** Writes the snapshot where the Worker reads it, with `{version, hash}` as metadata. */
  publish(snapshot: ConfigSnapshot, version: number): Promise<KvPublishResult>
  /** Reads the key back, e.g. to check a publish. */
  read(): Promise<KvReadResult>
}

/**
 * Publishes config snapshots to Workers KV through Cloudflare's REST API (the Worker's
 * kv-snapshot-loader.ts reads them). Failures are values whose KinfError carries the
 * Cloudflare code and, for 429 and 5xx, a retry hint; the token never appears in them.
 */
export function createCloudflareKvPublisher(
  input: CloudflareKvPublisherOptionsInput,
): CloudflareKvPublisher {
  const options = parseOptions(CloudflareKvPublisherOptions, input, 'cloudflare kv publisher')
  const schema = snapshotSchemaOf(options.plugins)
  const namespace = `${options.baseUrl.replace(/\/+$/, '')}/accounts/${options.accountId}/storage/kv/namespaces/${options.namespaceId}`
  const key = encodeURIComponent(snapshotKey)

  async function call(
    what: string,
    method: 'GET' | 'PUT',
    path: string,
    body?: FormData,
  ): Promise<{ ok: true; response: Response } | CloudflareApiFailure> {
    let response: Response
    try {
      response = await options.fetch(`${namespace}/${path}`, {
        method,
        headers: { authorization: `Bearer ${options.apiToken}` },
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(options.timeoutMs),
      })
    } catch (error) {
      return cloudflareUnreachable(what, error, options.timeoutMs, options.apiToken)
    }
    if (response.ok) return { ok: true, response }
    return cloudflareApiFailure(response, what, options.apiToken)
  }

  return {
    async publish(snapshot, version) {
      if (!Number.isSafeInteger(version) || version < 0)
        throw new KinfError('invalid_request', 'cloudflare kv: version must be a whole number')
      const verified = await verifySnapshot(snapshot, schema)
      const text = canonicalJson(verified)
      const bytes = new TextEncoder().encode(text).length
      if (bytes > maxValueBytes) return tooLarge(bytes)
      // Multipart carries metadata with the value; a raw body would store none.
      const form = new FormData()
      form.set('value', text)
      form.set('metadata', JSON.stringify({ version, hash: verified.hash }))
      const what = `writing "${snapshotKey}" to namespace ${options.namespaceId}`
      const answer = await call(what, 'PUT', `values/${key}`, form)
      if (!answer.ok) return answer
      // An answer of 200 with `success: false` is a refusal all the same.
      const body = await answer.response.text().catch(() => '')
      if (successOf(body) === false)
        return cloudflareApiFailure(answer.response, what, options.apiToken, body)
      return { ok: true, key: snapshotKey, bytes }
    },

    async read() {
      const what = `reading "${snapshotKey}" from namespace ${options.namespaceId}`
      const value = await call(what, 'GET', `values/${key}`)
      if (!value.ok) return value.codes.includes(10009) ? absent() : value
      const text = await value.response.text()
      const metadata = await call(what, 'GET', `metadata/${key}`)
      if (!metadata.ok) return metadata
      const envelope = parseJson(await metadata.response.text()) as { result?: unknown } | null
      return { ok: true, value: text, metadata: envelope?.result ?? null }
    },
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

function successOf(text: string): boolean | undefined {
  const json = parseJson(text) as { success?: unknown } | null
  return typeof json?.success === 'boolean' ? json.success : undefined
}

/** 10009 ("get: 'key not found'"): an expected outcome, not a failure. */
function absent(): KvReadResult {
  return { ok: true, value: null, metadata: null }
}

function tooLarge(bytes: number): CloudflareApiFailure {
  const message = `cloudflare kv: the snapshot is ${bytes} bytes, over KV's ${maxValueBytes}`
  return { ok: false, error: new KinfError('payload_too_large', message), status: null, codes: [] }
}
