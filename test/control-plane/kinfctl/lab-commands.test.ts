import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { Loaded } from '../../../control-plane/kinfctl/kinfctl-command.ts'
import { fromLab, labCommands } from '../../../control-plane/kinfctl/lab-commands.ts'
import { runCli } from '../../support/run-cli.ts'

/** A command whose module is not there, as a lab command is in the image. */
const missingModule = async (): Promise<Loaded> =>
  import(String(pathToFileURL(join(tmpdir(), 'no-such-lab', 'x.ts'))))

describe('kinfctl’s lab commands', () => {
  it('are bench, sim and up, and load from a clone', async () => {
    expect(Object.keys(labCommands).sort()).toEqual(['anatomy', 'bench', 'sim', 'up'])
    for (const command of Object.values(labCommands)) {
      const loaded = await command.load()
      expect('run' in loaded && loaded.usage.startsWith('Usage: kinfctl ')).toBe(true)
    }
    const help = await runCli(['bench', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^Usage: kinfctl bench /)
  })

  it('say where to run them when the lab is not here', async () => {
    const absent = new URL(`${pathToFileURL(mkdtempSync(join(tmpdir(), 'no-lab-')))}/lab/`)
    const loaded = await fromLab('bench', missingModule, absent)
    expect(loaded).toEqual({
      unavailable:
        'kinfctl bench is part of the lab (control-plane/lab/), which this installation leaves out: run it from a clone of the repository',
    })
  })

  it('throw what failed when the lab is here but a command does not load', async () => {
    await expect(fromLab('bench', missingModule)).rejects.toThrow(/no-such-lab/)
  })
})
