import { describe, expect, it } from 'vitest'
import { UsageError } from '../../../control-plane/kinfctl/cli-io.ts'
import { scorerCommand } from '../../../control-plane/kinfctl/commands/scorer.ts'
import { startOtlpCollector } from '../../support/otlp-collector.ts'
import { startRecordingVllmPod } from '../../support/recording-vllm-pod.ts'
import { startCommand } from '../../support/run-cli.ts'
import { model, until } from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// kinfctl scorer logs JSON lines on stderr (KINFERENCE_LOG_LEVEL) and exports its spans over
// OTLP when the standard variables say where; nothing is exported without them.

const cleanups = useScorerStacks()

const edgeTraceId = '4bf92f3577b34da6a3ce929d0e0e4736'
const edgeSpanId = '00f067aa0ba902b7'

/** kinfctl scorer over one stand-in pod, unsigned, with the environment `env`. */
async function scorerWith(env: Record<string, string>) {
  const pod = cleanups.closing(await startRecordingVllmPod())
  const scorer = startCommand(
    scorerCommand,
    [
      ...['--port', '0', '--metrics-port', 'off', '--allow-unsigned'],
      ...['--model', model, '--pod', `name=stand-in,http=${pod.url}`],
    ],
    env,
  )
  cleanups.defer(() => scorer.stop())
  await until(() => /listening on (\S+)/.test(scorer.stdout()))
  const url = /listening on (\S+)/.exec(scorer.stdout())?.[1] as string
  const answer = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'x-request-id': 'client-req-1',
      traceparent: `00-${edgeTraceId}-${edgeSpanId}-01`,
    },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 2 }),
  })
  expect(answer.status).toBe(200)
  await answer.text()
  return { pod, scorer }
}

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('kinfctl scorer’s logs and traces', () => {
  it('writes JSON lines, an access line per request, and exports its spans to the collector', async () => {
    const collector = cleanups.closing(await startOtlpCollector())
    const { pod, scorer } = await scorerWith({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url })
    await until(() => scorer.stderr().includes('"kind":"access"'))
    expect(await scorer.stop()).toBe(0)
    const lines = jsonLines(scorer.stderr())
    const access = lines.find((line) => line.kind === 'access')
    expect(access).toMatchObject({
      level: 'info',
      service: 'scorer',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      model,
      pod: 'stand-in',
      complete: true,
      // The request's trace: the one the client's traceparent named.
      trace_id: edgeTraceId,
    })
    expect(access?.request_id).toEqual(expect.any(String))
    expect(Date.parse(String(access?.time))).not.toBeNaN()
    // The scorer flushed its spans when it stopped.
    const spans = collector.spans()
    const route = spans.find((span) => span.name === 'kinference.route')
    expect(route).toMatchObject({
      serviceName: 'kinference-scorer',
      traceId: edgeTraceId,
      parentSpanId: edgeSpanId,
    })
    expect(route?.attributes['kinference.request_id']).toBe(access?.request_id)
    const podSpan = spans.find((span) => span.name === `chat ${model}`)
    expect(podSpan?.parentSpanId).toBe(route?.spanId)
    expect(pod.received[0]?.headers.traceparent).toBe(`00-${edgeTraceId}-${podSpan?.spanId}-01`)
  })

  it('hides the access line at level warn; without an OTLP endpoint the client’s traceparent passes', async () => {
    const { pod, scorer } = await scorerWith({ KINFERENCE_LOG_LEVEL: 'warn' })
    expect(await scorer.stop()).toBe(0)
    expect(jsonLines(scorer.stderr()).filter((line) => line.kind === 'access')).toEqual([])
    // Tracing off: the client's traceparent reaches the pod as it was sent.
    expect(pod.received[0]?.headers.traceparent).toBe(`00-${edgeTraceId}-${edgeSpanId}-01`)
  })

  it('refuses a KINFERENCE_LOG_LEVEL that is not a level', async () => {
    const scorer = startCommand(scorerCommand, ['--port', '0', '--allow-unsigned'], {
      KINFERENCE_LOG_LEVEL: 'loud',
    })
    await expect(scorer.exited).rejects.toThrow(UsageError)
    await expect(scorer.exited).rejects.toThrow(/KINFERENCE_LOG_LEVEL/)
  })
})
