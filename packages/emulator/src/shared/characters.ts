/**
 * The length of a text as every limit of the service counts it (255-character
 * description, 500-character note, 800-character URL): in code points, so an
 * emoji or another character outside the Basic Multilingual Plane is one
 * character, not two UTF-16 units.
 */
export function characterCount(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}
