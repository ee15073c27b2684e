import { describe, expect, it } from 'vitest'
import { formatTable, renderOutput } from '../../../control-plane/kinfctl/commands/render-output.ts'
import { runCli } from '../../support/run-cli.ts'

describe('kinfctl inspect, before any Redis is asked', () => {
  it.each([
    [[], /name what to inspect: pods, prefix, decisions, tenants, snapshot/],
    [['everything'], /cannot inspect "everything"/],
    [['pods', '--follow'], /--follow does not apply to inspect pods/],
    [['decisions', '--watch'], /--watch does not apply to inspect decisions/],
    [['tenants', '--pool', 'x'], /--pool does not apply to inspect tenants/],
    [['pods', '--interval', 'soon'], /--interval must be a duration/],
    [['snapshot', 'extra'], /unexpected argument "extra"/],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const { code, stderr } = await runCli(['inspect', ...args], '', {
      env: { REDIS_URL: 'redis://127.0.0.1:1' },
    })
    expect(code).toBe(2)
    expect(stderr.split('\n')[0]).toMatch(message)
  })

  it('lists inspect among the commands', async () => {
    const { stdout } = await runCli(['--help'])
    expect(stdout).toMatch(/inspect\s+show the shared state in Redis/)
  })
})

describe('renderOutput', () => {
  const rendered = {
    data: { pods: [{ pod: 'a', kv: 0.5 }] },
    columns: ['POD', 'KV'],
    rows: [
      ['a', '50%'],
      ['longer-name', '-'],
    ],
    notes: ['one note'],
  }

  it('pads table columns to their widest cell and adds the notes', () => {
    expect(renderOutput(rendered, 'table')).toBe(
      'POD          KV\na            50%\nlonger-name  -\none note\n',
    )
    expect(formatTable(['A'], [])).toBe('A\n')
  })

  it('writes the data alone as json or yaml', () => {
    expect(JSON.parse(renderOutput(rendered, 'json'))).toEqual(rendered.data)
    expect(renderOutput(rendered, 'yaml')).toBe('pods:\n  - pod: a\n    kv: 0.5\n')
  })
})
