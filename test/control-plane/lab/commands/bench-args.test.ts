import { describe, expect, it } from 'vitest'
import { UsageError } from '../../../../control-plane/kinfctl/cli-io.ts'
import { parseBenchArgs } from '../../../../control-plane/lab/commands/bench-args.ts'

describe('kinfctl bench --suite routing', () => {
  it('runs on the held-out seeds 7 and 11 unless --seeds says otherwise', () => {
    expect(parseBenchArgs(['--suite', 'routing']).seeds).toEqual([7, 11])
    expect(parseBenchArgs(['--suite', 'routing', '--seeds', '3']).seeds).toEqual([3])
    expect(parseBenchArgs(['--suite', 'targets']).seeds).toEqual([1, 2, 42])
  })

  it('takes --preset as a subset of its prefix workloads, and only those', () => {
    const args = parseBenchArgs(['--suite', 'routing', '--preset', 'b2b,prefix-heavy-6pods'])
    expect(args.routingWorkloads).toEqual(['b2b', 'prefix-heavy-6pods'])
    expect(parseBenchArgs(['--suite', 'routing']).routingWorkloads).toBeUndefined()
    expect(() => parseBenchArgs(['--suite', 'routing', '--preset', 'no-prefix'])).toThrow(
      UsageError,
    )
    expect(() => parseBenchArgs(['--suite', 'targets', '--preset', 'b2b'])).toThrow(UsageError)
    expect(() => parseBenchArgs(['--suite', 'routing', '--mode', 'live'])).toThrow(
      '--suite routing runs in des mode',
    )
  })

  it('takes admission for DES runs only, with the objective from --slo-ms, and names what is wrong', () => {
    const parsed = parseBenchArgs([
      '--preset',
      'shared-prefix',
      '--admission',
      'own',
      '--burst',
      '--hold',
      '--slo-ms',
      '1500',
      '--pii-share',
      '0.1',
    ])
    expect(parsed.admission).toEqual({
      gate: 'own',
      sloTtftMs: 1500,
      burst: true,
      hold: true,
      piiShare: 0.1,
    })
    expect(parseBenchArgs(['--preset', 'shared-prefix']).admission).toBeUndefined()
    expect(() => parseBenchArgs(['--preset', 'shared-prefix', '--burst'])).toThrow(/--admission/)
    expect(() => parseBenchArgs(['--preset', 'shared-prefix', '--admission', 'all'])).toThrow(
      /own or none/,
    )
    expect(() =>
      parseBenchArgs(['--preset', 'shared-prefix', '--admission', 'own', '--mode', 'live']),
    ).toThrow(/DES option/)
    expect(parseBenchArgs(['--suite', 'slo']).seeds).toEqual([7, 11])
  })
})
