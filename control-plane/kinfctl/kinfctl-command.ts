import type { CliIo } from './cli-io.ts'

/** A command once loaded: what it runs and the text its --help prints. */
export interface Loaded {
  run: (args: string[], io: CliIo) => Promise<number>
  usage: string
}

/** A command this installation does not hold, and why (a lab command in the image). */
export interface Unavailable {
  unavailable: string
}

export interface KinfctlCommand {
  summary: string
  /**
   * Imported on use: each command pulls in its own stack (the scorer's tokenizers, the
   * simulator, client-node), and loading all of them cost every process ~100 MiB.
   */
  load: () => Promise<Loaded | Unavailable>
}
