/**
 * Compares every position of the longer string, so the time depends on the lengths only,
 * never on where the first difference is: for secrets, signatures and key hashes.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  let difference = a.length ^ b.length
  const length = Math.max(a.length, b.length)
  for (let i = 0; i < length; i++) {
    // charCodeAt past the end is NaN, and NaN | 0 is 0: no branch on the position.
    difference |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  }
  return difference === 0
}
