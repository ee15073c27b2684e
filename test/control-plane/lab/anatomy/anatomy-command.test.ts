import { describe, expect, it } from 'vitest'
import { runCli } from '../../../support/run-cli.ts'

function run(args: string[]) {
  return runCli(['anatomy', ...args])
}

describe('anatomy', () => {
  it('shows a run per router, per pod and per window, the same for the same seed', async () => {
    const args = [
      '--preset',
      'shared-prefix',
      '--rate',
      '4',
      '--max-requests',
      '30',
      '--routers',
      'kinference',
    ]
    const first = await run(args)
    expect(first.code).toBe(0)
    expect(first.stdout).toContain('# shared-prefix at 4 req/s, seeds 1')
    expect(first.stdout).toContain('30 requests over 1 run(s)')
    expect(first.stdout).toMatch(/\| pod-0 \| \d+ \|/)
    expect(first.stdout).toContain('### Per 30-s window of arrivals')
    expect(first.stdout).not.toContain('### Per turn')
    expect((await run(args)).stdout).toBe(first.stdout)
  })

  it.each([
    [['--rate', '4'], '--preset "" is not a preset'],
    [['--preset', 'nope', '--rate', '4'], '--preset "nope" is not a preset'],
    [['--preset', 'shared-prefix'], '--rate is required'],
    [['--preset', 'shared-prefix', '--rate=-1'], '--rate "-1" is not a positive number'],
    [['--preset', 'shared-prefix', '--rate', '4', '--seeds', '1,x'], '--seeds item "x"'],
    [['--preset', 'shared-prefix', '--rate', '4', '--slow-quantile', '1'], 'is not below 1'],
    [['--preset', 'mooncake', '--rate', '1'], 'replays a trace'],
  ])('refuses %j with a usage error', async (args, message) => {
    const result = await run(args)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(message)
    expect(result.stdout).toBe('')
  })
})
