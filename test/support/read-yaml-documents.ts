import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Document, parseAllDocuments } from 'yaml'

export const examplesDir = 'infra/k8s/examples'
export const brokenDir = 'test/fixtures/kinfctl/broken'

/** The YAML files of a folder, sorted, with their parsed documents (null where YAML fails). */
export function readYamlFolder(folder: string): { file: string; documents: unknown[] }[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => {
      const file = join(folder, name)
      const documents = parseAllDocuments(readFileSync(file, 'utf8'))
      const list = Array.isArray(documents) ? documents : [documents]
      return {
        file,
        documents: list.map((doc) => (doc.errors.length > 0 ? null : safeToJs(doc))),
      }
    })
}

function safeToJs(doc: Document.Parsed): unknown {
  try {
    return doc.toJS({ maxAliasCount: 1_000 })
  } catch {
    return null
  }
}
