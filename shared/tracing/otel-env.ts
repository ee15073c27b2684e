/**
 * The standard OpenTelemetry SDK environment variables (the OpenTelemetry specification's
 * "Environment Variable Specification" and "OTLP Exporter Configuration"), the subset
 * Kinference reads. Tracing is off by default: it is on only when an OTLP endpoint variable
 * is set, and OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off again. A value
 * Kinference cannot honour is a KinfError naming the variable, never silently ignored
 * (the specification lets SDKs warn and carry on; a dropped trace pipeline is worse).
 * docs/tracing.md lists the variables.
 */
import { z } from 'zod'
import { KinfError } from '../errors/kinf-error.ts'

export const traceSamplerNames = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const
export type TraceSamplerName = (typeof traceSamplerNames)[number]

/** The sampler the variables chose; `ratio` is read for the traceidratio samplers only. */
export interface TraceSamplerChoice {
  name: TraceSamplerName
  ratio: number
}

/** Where and how spans are exported when tracing is on. */
export interface OtlpTracesExport {
  enabled: true
  /** The full traces URL (…/v1/traces). */
  url: string
  headers: Record<string, string>
  timeoutMillis: number
  compression: 'gzip' | 'none'
  /** File paths of PEM files for TLS: the CA to trust, and a client certificate and key. */
  tls: { certificate?: string; clientCertificate?: string; clientKey?: string }
  /** OTEL_SERVICE_NAME; undefined leaves the component's own name. */
  serviceName: string | undefined
  resourceAttributes: Record<string, string>
  sampler: TraceSamplerChoice
}

export type OtelTracingConfig = { enabled: false } | OtlpTracesExport

/** The OTLP exporter's default per-export timeout (OTLP Exporter Configuration). */
export const defaultOtlpTimeoutMillis = 10_000

type Issues = { issues: z.core.$ZodRawIssue[] }

/** An empty variable is unset, as the specification says. */
const text = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined),
  z.string().optional(),
)

function refuse(ctx: Issues, input: string, message: string): never {
  ctx.issues.push({ code: 'custom', input, message })
  return z.NEVER as never
}

/** A variable read by `read`, which throws a message when the value is not acceptable. */
function variable<T>(read: (value: string) => T) {
  return text.transform((value, ctx) => {
    if (value === undefined) return undefined
    try {
      return read(value)
    } catch (error) {
      return refuse(ctx, value, error instanceof Error ? error.message : String(error))
    }
  })
}

function flag(value: string): boolean {
  const lower = value.toLowerCase()
  if (lower === 'true' || lower === 'false') return lower === 'true'
  throw new Error(`'${value}' is not true or false`)
}

function exporters(value: string): 'otlp' | 'none' {
  const names = [...new Set(value.split(',').map((name) => name.trim().toLowerCase()))]
  const unsupported = names.filter((name) => name !== 'otlp' && name !== 'none')
  if (unsupported.length > 0)
    throw new Error(
      `'${unsupported.join(',')}' is not supported; Kinference exports 'otlp' or 'none'`,
    )
  if (names.length > 1) throw new Error(`'none' cannot be combined with 'otlp'`)
  return names[0] as 'otlp' | 'none'
}

function httpUrl(value: string): string {
  const url = URL.parse(value)
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new Error(`'${value}' is not an http or https URL`)
  return value
}

function protocol(value: string): 'http/protobuf' {
  if (value === 'http/protobuf') return value
  throw new Error(
    value === 'grpc' || value === 'http/json'
      ? `'${value}' is not supported; Kinference exports OTLP over http/protobuf only (set it to http/protobuf or unset it)`
      : `'${value}' is not an OTLP protocol (grpc, http/protobuf or http/json); Kinference exports http/protobuf`,
  )
}

function millis(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) <= 0)
    throw new Error(`'${value}' is not a whole number of milliseconds above 0`)
  return Number(value)
}

function compression(value: string): 'gzip' | 'none' {
  if (value === 'gzip' || value === 'none') return value
  throw new Error(`'${value}' is not gzip or none`)
}

function samplerName(value: string): TraceSamplerName {
  const name = value.toLowerCase()
  if ((traceSamplerNames as readonly string[]).includes(name)) return name as TraceSamplerName
  throw new Error(`'${value}' is not a supported sampler (${traceSamplerNames.join(', ')})`)
}

const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * A W3C-Baggage-like list `key=value,key2=value2` with percent-encoded values, the form of
 * OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES.
 */
function keyValueList(isHeaders: boolean) {
  return (value: string): Record<string, string> => {
    const pairs: Record<string, string> = {}
    for (const member of value.split(',')) {
      if (member.trim() === '') continue
      const equals = member.indexOf('=')
      const key = member.slice(0, Math.max(equals, 0)).trim()
      if (equals < 0 || key === '') throw new Error(`'${member.trim()}' is not key=value`)
      if (isHeaders && !headerName.test(key)) throw new Error(`'${key}' is not a header name`)
      pairs[isHeaders ? key.toLowerCase() : key] = percentDecoded(member.slice(equals + 1).trim())
    }
    return pairs
  }
}

function percentDecoded(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    throw new Error(`'${value}' is not percent-encoded correctly`)
  }
}

export const OtelEnv = z.object({
  OTEL_SDK_DISABLED: variable(flag),
  OTEL_TRACES_EXPORTER: variable(exporters),
  OTEL_EXPORTER_OTLP_ENDPOINT: variable(httpUrl),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: variable(httpUrl),
  OTEL_EXPORTER_OTLP_HEADERS: variable(keyValueList(true)),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: variable(keyValueList(true)),
  OTEL_EXPORTER_OTLP_PROTOCOL: variable(protocol),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: variable(protocol),
  OTEL_EXPORTER_OTLP_TIMEOUT: variable(millis),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: variable(millis),
  OTEL_EXPORTER_OTLP_COMPRESSION: variable(compression),
  OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: variable(compression),
  OTEL_EXPORTER_OTLP_CERTIFICATE: text,
  OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: text,
  OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: text,
  OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE: text,
  OTEL_EXPORTER_OTLP_CLIENT_KEY: text,
  OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: text,
  OTEL_SERVICE_NAME: text,
  OTEL_RESOURCE_ATTRIBUTES: variable(keyValueList(false)),
  OTEL_TRACES_SAMPLER: variable(samplerName),
  OTEL_TRACES_SAMPLER_ARG: text,
})
export type OtelEnv = z.infer<typeof OtelEnv>

/** What decides whether tracing is on; read first, so that when it is off nothing else is. */
const OtelSwitches = OtelEnv.pick({
  OTEL_SDK_DISABLED: true,
  OTEL_TRACES_EXPORTER: true,
  OTEL_EXPORTER_OTLP_ENDPOINT: true,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: true,
})

function parsed<T>(schema: z.ZodType<T>, env: Record<string, string | undefined>): T {
  const result = schema.safeParse(env)
  if (result.success) return result.data
  const issue = result.error.issues[0] as z.core.$ZodIssue
  throw new KinfError('invalid_config', `${issue.path.join('.')}: ${issue.message}`)
}

/**
 * Kinference's tracing configuration from the environment (process.env, a command's io.env,
 * or the Worker's vars: workers/worker/worker-tracing.ts). When tracing is off, the
 * exporter's and sampler's variables are not read, so a value meant for another SDK in the
 * same environment cannot stop Kinference starting.
 */
export function parseOtelEnv(env: Record<string, string | undefined>): OtelTracingConfig {
  const switches = parsed(OtelSwitches, env)
  const hasEndpoint =
    switches.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined ||
    switches.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined
  if (switches.OTEL_SDK_DISABLED || switches.OTEL_TRACES_EXPORTER === 'none' || !hasEndpoint)
    return { enabled: false }
  const vars = parsed(OtelEnv, env)
  return {
    enabled: true,
    url: vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? tracesUrlOf(vars.OTEL_EXPORTER_OTLP_ENDPOINT),
    // Merged key by key, the traces list winning, as the OTLP exporter for Node merges them.
    headers: { ...vars.OTEL_EXPORTER_OTLP_HEADERS, ...vars.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    timeoutMillis:
      vars.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ??
      vars.OTEL_EXPORTER_OTLP_TIMEOUT ??
      defaultOtlpTimeoutMillis,
    compression:
      vars.OTEL_EXPORTER_OTLP_TRACES_COMPRESSION ?? vars.OTEL_EXPORTER_OTLP_COMPRESSION ?? 'none',
    tls: withoutUndefined({
      certificate:
        vars.OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE ?? vars.OTEL_EXPORTER_OTLP_CERTIFICATE,
      clientCertificate:
        vars.OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE ??
        vars.OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE,
      clientKey: vars.OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY ?? vars.OTEL_EXPORTER_OTLP_CLIENT_KEY,
    }),
    serviceName: vars.OTEL_SERVICE_NAME,
    resourceAttributes: vars.OTEL_RESOURCE_ATTRIBUTES ?? {},
    sampler: samplerOf(vars.OTEL_TRACES_SAMPLER, vars.OTEL_TRACES_SAMPLER_ARG),
  }
}

/** OTEL_EXPORTER_OTLP_ENDPOINT is a base URL: the traces path is appended to its path. */
function tracesUrlOf(base: string | undefined): string {
  return `${(base ?? '').replace(/\/+$/, '')}/v1/traces`
}

/** The argument is a ratio in [0, 1] for the traceidratio samplers and ignored by the rest. */
function samplerOf(name: TraceSamplerName | undefined, arg: string | undefined) {
  const chosen = name ?? 'parentbased_always_on'
  if (!chosen.endsWith('traceidratio') || arg === undefined) return { name: chosen, ratio: 1 }
  const ratio = Number(arg)
  if (!/^[\d.eE+-]+$/.test(arg) || !(ratio >= 0 && ratio <= 1))
    throw new KinfError(
      'invalid_config',
      `OTEL_TRACES_SAMPLER_ARG: '${arg}' is not a sampling ratio between 0 and 1`,
    )
  return { name: chosen, ratio }
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}
