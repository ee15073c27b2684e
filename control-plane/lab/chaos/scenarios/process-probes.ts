import { readdir, readFile, readlink } from 'node:fs/promises'
import { connect } from 'node:net'

/** A process's resident set (VmRSS of /proc/<pid>/status) in bytes; null once it is gone. */
export async function residentBytes(pid: number): Promise<number | null> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => null)
  const kib = status === null ? null : /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]
  return kib ? Number(kib) * 1024 : null
}

/** Figures sampled every `everyMs` until stopped: the start, the peak and the end. */
export interface Sampler {
  stop(): Promise<number[]>
}

export function startSampler(sample: () => Promise<number | null>, everyMs: number): Sampler {
  const samples: number[] = []
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const value = await sample()
      if (value !== null) samples.push(value)
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    async stop() {
      stopped = true
      await loop
      return samples
    },
  }
}

export const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`

/** "start → peak → end" of a series of samples, in MiB. */
export function rssSummary(samples: readonly number[]): string {
  if (samples.length === 0) return 'no samples'
  return `${mib(samples[0] ?? 0)} → peak ${mib(Math.max(...samples))} → end ${mib(samples.at(-1) ?? 0)}`
}

/** Whether a new TCP connection to `url`'s port is refused (a draining server's promise). */
export function connectionRefused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) })
    socket.setTimeout(2_000, () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })
}

/**
 * The host's count of connections dropped because a listen queue was full (TcpExt
 * ListenOverflows): each is a client waiting for a SYN retransmit (1, 3, 7 s …).
 */
export async function listenOverflows(): Promise<number | null> {
  const text = await readFile('/proc/net/netstat', 'utf8').catch(() => '')
  const [names, values] = text.split('\n').filter((line) => line.startsWith('TcpExt:'))
  const index = names?.split(/\s+/).indexOf('ListenOverflows') ?? -1
  const value = index < 0 ? undefined : values?.split(/\s+/)[index]
  return value === undefined ? null : Number(value)
}

/**
 * The connections process `pid` holds on its listening `port`, by the client's port:
 * its socket descriptors (/proc/<pid>/fd) matched with /proc/net/tcp. A connection the
 * process closed is gone from here even while the kernel still flushes it.
 */
export async function heldConnections(pid: number, port: number): Promise<Set<number>> {
  const inodes = new Set<string>()
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [])
  await Promise.all(
    fds.map(async (fd) => {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1]
      if (inode) inodes.add(inode)
    }),
  )
  const hex = port.toString(16).toUpperCase().padStart(4, '0')
  const held = new Set<number>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '')
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      const [, local, remote, state] = fields
      if (!local?.endsWith(`:${hex}`) || state === '0A' || !inodes.has(fields[9] ?? '')) continue
      held.add(Number.parseInt(remote?.split(':').at(-1) ?? '0', 16))
    }
  }
  return held
}
