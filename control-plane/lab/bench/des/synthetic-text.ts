/** What GIE and SGLang hash: characters; four per token, as GIE assumes. */
export function asText(ids: readonly number[]): string {
  const parts = new Array<string>(ids.length)
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as number
    let word = spellings.get(id)
    if (word === undefined) {
      word = (id % 1_679_616).toString(36).padStart(4, '0')
      spellings.set(id, word)
    }
    parts[i] = word
  }
  return parts.join('')
}

const spellings = new Map<number, string>()

const silent = new Map<number, number[]>()
/** One answer of `length` tokens shared by every single-turn request (the engine only reads it). */
export function silentAnswer(length: number): number[] {
  let ids = silent.get(length)
  if (!ids) {
    ids = new Array<number>(length).fill(13)
    silent.set(length, ids)
  }
  return ids
}
