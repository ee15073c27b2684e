import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { upCommand } from '../../../control-plane/lab/commands/up.ts'
import { runCli } from '../../support/run-cli.ts'
import { until } from '../../support/scorer-stack.ts'

/**
 * `kinfctl up` (npm start) prints where the edge's and the scorer's metrics are: their own
 * listeners, not the API ports, which answer /metrics 404.
 */
let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kinf-up-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('kinfctl up', () => {
  it('prints the metrics addresses in its banner, and they serve the metrics', async () => {
    let out = ''
    let interrupt = () => {}
    const exited = upCommand(
      [
        ...['--port', '0', '--metrics-port', '0', '--pods', '1', '--time-scale', '50'],
        ...['--snapshot', join(dir, 'snapshot.json')],
      ],
      {
        stdout: (text) => {
          out += text
        },
        stderr: () => {},
        readStdin: async () => '',
        untilInterrupted: () => new Promise<void>((resolve) => (interrupt = resolve)),
        env: {},
      },
    )
    try {
      await until(() => out.includes('Ctrl-C stops everything.'), 60_000)
      const edge = /^ {2}edge {5}(http:\/\/\S+)\/v1 /m.exec(out)?.[1]
      const metrics =
        /^ {2}metrics {2}edge (http:\/\/\S+)\/metrics, scorer (http:\/\/\S+)\/metrics \(and \2\/health\)$/m.exec(
          out,
        )
      expect(edge, out).toBeDefined()
      expect(metrics, out).not.toBeNull()
      const [, edgeMetrics, scorerMetrics] = metrics as RegExpExecArray
      expect(await (await fetch(`${edgeMetrics}/metrics`)).text()).toMatch(
        /^# HELP kinference_edge_/m,
      )
      expect(await (await fetch(`${scorerMetrics}/metrics`)).text()).toMatch(
        /^# HELP kinference_scorer_/m,
      )
      expect((await fetch(`${scorerMetrics}/health`)).status).toBe(200)
      expect((await fetch(`${edge}/metrics`)).status).toBe(404)
    } finally {
      interrupt()
      expect(await exited).toBe(0)
    }
  }, 90_000)

  it.each([
    ['--metrics-port', 'nine'],
    ['--scorer-metrics-port', '70000'],
  ])('refuses %s %s with exit 2', async (flag, value) => {
    const { code, stderr } = await runCli(['up', flag, value])
    expect(code).toBe(2)
    expect(stderr.split('\n')[0]).toContain(`${flag} must be a port number (0 = a free one) or off`)
  })
})
