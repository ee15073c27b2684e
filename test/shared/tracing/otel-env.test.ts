import { describe, expect, it } from 'vitest'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { parseOtelEnv } from '../../../shared/tracing/otel-env.ts'

const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }

/** The configuration of an environment that turns tracing on. */
function on(env: Record<string, string | undefined>) {
  const config = parseOtelEnv({ ...endpoint, ...env })
  if (!config.enabled) throw new Error('tracing is off')
  return config
}

/** The KinfError an environment is refused with. */
function refusal(env: Record<string, string | undefined>): KinfError {
  try {
    parseOtelEnv(env)
  } catch (error) {
    if (KinfError.isInstance(error)) return error
    throw error
  }
  throw new Error('the environment was accepted')
}

describe('parseOtelEnv: on or off', () => {
  it('is off with no variables, and with other SDK variables but no endpoint', () => {
    expect(parseOtelEnv({})).toEqual({ enabled: false })
    expect(
      parseOtelEnv({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on', PATH: '/bin' }),
    ).toEqual({ enabled: false })
  })

  it('is on with either endpoint variable', () => {
    expect(parseOtelEnv(endpoint).enabled).toBe(true)
    expect(
      parseOtelEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c.example/v1/traces' }).enabled,
    ).toBe(true)
  })

  it('treats an empty endpoint as unset', () => {
    expect(parseOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toEqual({ enabled: false })
  })

  it('is off when OTEL_SDK_DISABLED is true (any case), on when it is false', () => {
    expect(parseOtelEnv({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toEqual({ enabled: false })
    expect(parseOtelEnv({ ...endpoint, OTEL_SDK_DISABLED: 'false' }).enabled).toBe(true)
    expect(refusal({ ...endpoint, OTEL_SDK_DISABLED: 'yes' }).message).toMatch(
      /^OTEL_SDK_DISABLED: /,
    )
  })

  it('is off when OTEL_TRACES_EXPORTER is none; refuses exporters it has not', () => {
    expect(parseOtelEnv({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toEqual({ enabled: false })
    expect(parseOtelEnv({ ...endpoint, OTEL_TRACES_EXPORTER: 'otlp' }).enabled).toBe(true)
    const error = refusal({ ...endpoint, OTEL_TRACES_EXPORTER: 'zipkin' })
    expect(error.code).toBe('invalid_config')
    expect(error.message).toMatch(/^OTEL_TRACES_EXPORTER: 'zipkin' is not supported/)
    expect(refusal({ OTEL_TRACES_EXPORTER: 'otlp,console' }).message).toMatch(
      /OTEL_TRACES_EXPORTER/,
    )
  })

  it('does not read the exporter variables when off', () => {
    expect(parseOtelEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual({ enabled: false })
  })
})

describe('parseOtelEnv: the exporter', () => {
  it('appends /v1/traces to the base endpoint, keeping its path', () => {
    expect(on({}).url).toBe('http://collector:4318/v1/traces')
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example/otlp/' }).url).toBe(
      'https://c.example/otlp/v1/traces',
    )
  })

  it('uses the traces endpoint as it is, over the base', () => {
    expect(on({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t.example:9/custom' }).url).toBe(
      'http://t.example:9/custom',
    )
  })

  it('refuses an endpoint that is not an http(s) URL, naming the variable', () => {
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }).message).toMatch(
      /^OTEL_EXPORTER_OTLP_ENDPOINT: /,
    )
    expect(refusal({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' }).message).toMatch(
      /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: /,
    )
  })

  it('reads headers percent-decoded, the traces list winning key by key', () => {
    const config = on({
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20abc%3D%3D, x-tenant = a ,x-both=general',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-both=traces',
    })
    expect(config.headers).toEqual({
      authorization: 'Basic abc==',
      'x-tenant': 'a',
      'x-both': 'traces',
    })
  })

  it('refuses malformed headers, naming the variable', () => {
    expect(refusal({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }).message).toMatch(
      /^OTEL_EXPORTER_OTLP_HEADERS: 'novalue' is not key=value/,
    )
    expect(refusal({ ...endpoint, OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'a=%zz' }).message).toMatch(
      /^OTEL_EXPORTER_OTLP_TRACES_HEADERS: /,
    )
    expect(refusal({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'bad key=1' }).message).toMatch(
      /not a header name/,
    )
  })

  it('accepts http/protobuf and refuses grpc and http/json, naming the variable', () => {
    expect(on({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).enabled).toBe(true)
    expect(refusal({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).message).toMatch(
      /^OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' is not supported/,
    )
    expect(
      refusal({ ...endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }).message,
    ).toMatch(/^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http\/json' is not supported/)
  })

  it('reads the timeout in milliseconds, the traces one first, 10 s by default', () => {
    expect(on({}).timeoutMillis).toBe(10_000)
    expect(on({ OTEL_EXPORTER_OTLP_TIMEOUT: '2500' }).timeoutMillis).toBe(2500)
    expect(
      on({ OTEL_EXPORTER_OTLP_TIMEOUT: '2500', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '700' })
        .timeoutMillis,
    ).toBe(700)
    for (const bad of ['0', '-5', '1.5', 'soon'])
      expect(refusal({ ...endpoint, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: bad }).message).toMatch(
        /^OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: /,
      )
  })

  it('reads compression (none by default) and the TLS file paths', () => {
    expect(on({}).compression).toBe('none')
    expect(on({ OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' }).compression).toBe('gzip')
    expect(refusal({ ...endpoint, OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd' }).message).toMatch(
      /^OTEL_EXPORTER_OTLP_COMPRESSION: /,
    )
    expect(on({}).tls).toEqual({})
    expect(
      on({
        OTEL_EXPORTER_OTLP_CERTIFICATE: '/etc/ca.pem',
        OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: '/etc/traces-ca.pem',
        OTEL_EXPORTER_OTLP_CLIENT_KEY: '/etc/key.pem',
      }).tls,
    ).toEqual({ certificate: '/etc/traces-ca.pem', clientKey: '/etc/key.pem' })
  })
})

describe('parseOtelEnv: the resource and the sampler', () => {
  it('reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (percent-decoded)', () => {
    const config = on({
      OTEL_SERVICE_NAME: 'edge-eu',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,team=ml%2Cinfra',
    })
    expect(config.serviceName).toBe('edge-eu')
    expect(config.resourceAttributes).toEqual({
      'deployment.environment.name': 'prod',
      team: 'ml,infra',
    })
    expect(on({}).serviceName).toBeUndefined()
    expect(refusal({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: '=x' }).message).toMatch(
      /^OTEL_RESOURCE_ATTRIBUTES: /,
    )
  })

  it('samples parent-based always-on by default', () => {
    expect(on({}).sampler).toEqual({ name: 'parentbased_always_on', ratio: 1 })
  })

  it('reads every sampler the specification names that Kinference has', () => {
    for (const name of [
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ])
      expect(on({ OTEL_TRACES_SAMPLER: name }).sampler.name).toBe(name)
    expect(refusal({ ...endpoint, OTEL_TRACES_SAMPLER: 'jaeger_remote' }).message).toMatch(
      /^OTEL_TRACES_SAMPLER: 'jaeger_remote' is not a supported sampler/,
    )
  })

  it('reads the ratio for the ratio samplers only', () => {
    expect(
      on({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })
        .sampler,
    ).toEqual({ name: 'parentbased_traceidratio', ratio: 0.25 })
    expect(on({ OTEL_TRACES_SAMPLER: 'traceidratio' }).sampler.ratio).toBe(1)
    expect(
      on({ OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: 'ignored' }).sampler,
    ).toEqual({ name: 'always_on', ratio: 1 })
    for (const bad of ['1.5', '-0.1', 'half', 'Infinity'])
      expect(
        refusal({ ...endpoint, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: bad })
          .message,
      ).toMatch(/^OTEL_TRACES_SAMPLER_ARG: /)
  })
})
