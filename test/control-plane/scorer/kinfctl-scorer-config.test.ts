import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { scorerCommand } from '../../../control-plane/kinfctl/commands/scorer.ts'
import type { SimPod } from '../../../control-plane/lab/sim/sim-pod.ts'
import { startCommand } from '../../support/run-cli.ts'
import { until } from '../../support/scorer-stack.ts'
import { snapshotOf, startPods } from '../../support/snapshot-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

const adminToken = 'kinfctl-admin-token-0123456789'
const cleanups = useScorerStacks()

const flagOf = (pod: SimPod) =>
  `name=${pod.config.podName},http=${pod.url},events=${pod.kvEventsEndpoint},replay=${pod.replayEndpoint}`

describe('kinfctl scorer --config FILE', () => {
  it('routes to the snapshot’s endpoints and to the pods given with --pod', async () => {
    const pods = await startPods(2)
    for (const pod of pods) cleanups.closing(pod)
    const [listed, byHand] = pods as [SimPod, SimPod]
    const file = join(await mkdtemp(join(tmpdir(), 'kinf-scorer-')), 'snapshot.json')
    await writeFile(file, JSON.stringify(await snapshotOf([{ name: 'default', pods: [listed] }])))
    const scorer = startCommand(
      scorerCommand,
      [
        ...['--port', '0', '--metrics-port', '0', '--allow-unsigned'],
        ...['--config', file, '--pod', flagOf(byHand)],
      ],
      { KINFERENCE_ADMIN_TOKEN: adminToken },
    )
    cleanups.defer(() => scorer.stop())
    await until(() => /listening on (\S+)/.test(scorer.stdout()))
    const out = scorer.stdout()
    expect(out).toContain('(1 pools, 2 pods,')
    const url = /listening on (\S+)/.exec(out)?.[1]
    const report = (await (
      await fetch(`${url}/admin/pods`, { headers: { authorization: `Bearer ${adminToken}` } })
    ).json()) as { pools: { id: string; pods: { name: string }[] }[] }
    expect(report.pools.map((pool) => pool.id)).toEqual(['test/default'])
    expect(report.pools[0]?.pods.map((pod) => pod.name).sort()).toEqual(
      [listed, byHand].map((pod) => pod.config.podName).sort(),
    )
    const answer = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hello' }], max_tokens: 3 }),
    })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-kinference-decision')).toMatch(/^pool=default; pod=sim-pod-[01];/)
    expect(await scorer.stop()).toBe(0)
  })
})
