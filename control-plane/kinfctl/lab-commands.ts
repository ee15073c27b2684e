import { access } from 'node:fs/promises'
import type { KinfctlCommand, Loaded, Unavailable } from './kinfctl-command.ts'

/**
 * kinfctl's commands that live in the lab (control-plane/lab/commands, lab/anatomy): the
 * benchmarks and their anatomy, the simulated pods and the embedded stack. This is the one service file that names the
 * lab, by dynamic import only (test/boundaries.test.ts), because the image leaves the lab
 * out (Dockerfile): there these commands say so instead of failing on a missing module.
 */
export const labCommands: Record<string, KinfctlCommand> = {
  sim: {
    summary: 'run simulated vLLM pods',
    load: () =>
      fromLab('sim', async () => {
        const { simCommand: run, simUsage: usage } = await import('../lab/commands/sim.ts')
        return { run, usage }
      }),
  },
  up: {
    summary: 'run the embedded default (pods, scorer, edge)',
    load: () =>
      fromLab('up', async () => {
        const { upCommand: run, upUsage: usage } = await import('../lab/commands/up.ts')
        return { run, usage }
      }),
  },
  anatomy: {
    summary: 'show where one benchmark workload’s TTFT goes, request by request',
    load: () =>
      fromLab('anatomy', async () => {
        const { anatomyCommand: run, anatomyUsage: usage } = await import(
          '../lab/anatomy/anatomy-command.ts'
        )
        return { run, usage }
      }),
  },
  bench: {
    summary: 'benchmark routing strategies side by side',
    load: () =>
      fromLab('bench', async () => {
        const { benchCommand: run, benchUsage: usage } = await import('../lab/commands/bench.ts')
        return { run, usage }
      }),
  },
}

/**
 * Loads a lab command, or says it is not here when the lab is absent. Any other failure
 * (the lab is there but the command does not load) is thrown as it is: that is a bug.
 */
export async function fromLab(
  name: string,
  load: () => Promise<Loaded>,
  lab: URL = new URL('../lab/', import.meta.url),
): Promise<Loaded | Unavailable> {
  try {
    return await load()
  } catch (error) {
    if (await present(lab)) throw error
    return {
      unavailable: `kinfctl ${name} is part of the lab (control-plane/lab/), which this installation leaves out: run it from a clone of the repository`,
    }
  }
}

async function present(file: URL): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  )
}
