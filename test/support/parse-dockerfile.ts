/** One instruction of a Dockerfile, continuation lines joined. */
export interface DockerInstruction {
  keyword: string
  /** Flags such as --from=deps, by name. */
  flags: Record<string, string>
  /** The arguments: a JSON array's items (exec form), or the words of the shell form. */
  args: string[]
  /** The text after the keyword and its flags, as written. */
  text: string
  line: number
}

export interface DockerStage {
  image: string
  name: string | null
  instructions: DockerInstruction[]
}

/**
 * Reads a Dockerfile into stages: enough to check it statically (no variables, heredocs
 * or parser directives other than the syntax comment, which this repository does not use).
 */
export function parseDockerfile(text: string): DockerStage[] {
  const stages: DockerStage[] = []
  for (const instruction of instructionsOf(text)) {
    if (instruction.keyword === 'FROM') {
      const [image = '', as, name] = instruction.args
      stages.push({
        image,
        name: as?.toUpperCase() === 'AS' ? (name ?? null) : null,
        instructions: [],
      })
    } else {
      const stage = stages.at(-1)
      if (!stage) throw new Error(`line ${instruction.line}: ${instruction.keyword} before FROM`)
      stage.instructions.push(instruction)
    }
  }
  return stages
}

function instructionsOf(text: string): DockerInstruction[] {
  const result: DockerInstruction[] = []
  let pending = ''
  let start = 0
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim()
    if (pending === '' && (line === '' || line.startsWith('#'))) return
    if (pending === '') start = index + 1
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `
      return
    }
    result.push(toInstruction(pending + line, start))
    pending = ''
  })
  return result
}

function toInstruction(source: string, line: number): DockerInstruction {
  const [keyword = '', ...rest] = source.split(/\s+/)
  const flags: Record<string, string> = {}
  let text = source.slice(keyword.length).trim()
  for (
    let flag = /^--([a-z-]+)=(\S+)\s*/.exec(text);
    flag;
    flag = /^--([a-z-]+)=(\S+)\s*/.exec(text)
  ) {
    flags[flag[1] ?? ''] = flag[2] ?? ''
    text = text.slice(flag[0].length)
  }
  const args = text.startsWith('[')
    ? (JSON.parse(text) as string[])
    : text.split(/\s+/).filter(Boolean)
  return { keyword: keyword.toUpperCase(), flags, args: rest.length === 0 ? [] : args, text, line }
}
