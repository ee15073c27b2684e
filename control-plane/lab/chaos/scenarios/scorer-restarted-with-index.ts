import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions'
import type { ChaosClient, RequestOutcome } from '../chaos-client.ts'
import type { ChaosScenario } from '../chaos-scenario.ts'
import { startChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest } from '../chaos-traffic.ts'
import { tallyOutcomes } from '../scenario-result.ts'

/**
 * Scenario 4: a scorer keeping its index in Redis is killed and started again. The first
 * request of each prefix after the restart must go to the pod that holds the prefix and
 * hit its cache: the restarted scorer reads what the index already knows.
 */
export const scorerRestartedWithIndex: ChaosScenario = {
  id: 'scorer-restarted-with-index',
  title: '4. scorer restarted with the Redis index',
  async run(context) {
    const full = context.size === 'full'
    const prefixes = full ? 24 : 6
    const stack = await startChaosStack({
      redisUrl: context.redisUrl,
      pods: 3,
      scorers: 1,
      timeScale: 4,
      seed: context.seed,
      scorerIndexInRedis: true,
    })
    try {
      const prompts = chaosPrompts({ seed: context.seed, prefixes, prefixWords: 600 })
      const client = stack.client()
      const send = (messages: ChatCompletionMessageParam[]) =>
        client.send(chaosRequest(messages, { maxTokens: 8 }))
      const warm = await sequential(client, prefixes, (i) => prompts(i), send)
      const holders = warm.map((o) => (o.kind === 'completed' ? o.pod : null))
      const scorer = stack.scorers[0]
      if (!scorer) throw new Error('no scorer')
      await scorer.stop('SIGKILL')
      const down = await send(prompts(0))
      const restartedAt = context.nowMs()
      await scorer.start()
      const readyMs = context.nowMs() - restartedAt
      // The same prefixes with a new question each: only the shared prefix can be cached.
      const after = await sequential(client, prefixes, (i) => prompts(i + prefixes), send)
      const hits = after.filter(
        (o, i) => o.kind === 'completed' && o.pod === holders[i] && (o.cachedTokens ?? 0) > 0,
      ).length
      return {
        ...tallyOutcomes([...warm, down, ...after]),
        convergence: { what: 'restart to serving', ms: readyMs, targetMs: null },
        checks: [
          {
            name: 'first requests after the restart hit the pods holding their prefixes',
            ok: hits === prefixes,
            detail: `${hits} of ${prefixes} went to the prefix's pod with cached tokens`,
          },
          {
            // The policy bursts this model to Bedrock when the pool cannot take it.
            name: 'a request while no scorer runs bursts to Bedrock or gets a clean error',
            ok: down.kind === 'completed' ? down.pod === null : down.kind === 'clean-error',
            detail: describeDown(down),
          },
        ],
        notes: [
          `pods before → after the restart: ${after.map((o, i) => `${holders[i]?.slice(-1)}→${o.kind === 'completed' ? o.pod?.slice(-1) : o.kind}`).join(', ')}`,
          `cached tokens of the first requests after the restart: ${after.map((o) => (o.kind === 'completed' ? (o.cachedTokens ?? 0) : 0)).join(', ')}`,
        ],
      }
    } finally {
      await stack.close()
    }
  },
}

/** One request per prefix, one after another, so each lands where the index says. */
async function sequential(
  _client: ChaosClient,
  count: number,
  messages: (i: number) => ChatCompletionMessageParam[],
  send: (messages: ChatCompletionMessageParam[]) => Promise<RequestOutcome>,
): Promise<RequestOutcome[]> {
  const outcomes: RequestOutcome[] = []
  for (let i = 0; i < count; i++) outcomes.push(await send(messages(i)))
  return outcomes
}

function describeDown(outcome: RequestOutcome): string {
  if (outcome.kind === 'clean-error') return `${outcome.status} ${outcome.code}`
  if (outcome.kind === 'lost') return `lost: ${outcome.why}`
  return outcome.pod === null ? 'served by Bedrock' : `served by ${outcome.pod}`
}
