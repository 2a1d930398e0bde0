import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import type { AccountSnapshot } from '../account/account-state.js'
import type { EngineSnapshot } from '../delivery/engine.js'

/** What the state file holds: the engine's state and the key generated at the first start. */
export interface StateFile extends EngineSnapshot {
  version: 1
  generatedKey?: string
  /** Programs, channels, applications, keys and the account's status. */
  account?: AccountSnapshot
}

/** The state at `path`, or undefined when there is no file yet. Throws when it is not one. */
export function readStateFile(path: string): StateFile | undefined {
  if (!existsSync(path)) return undefined
  let state: StateFile
  try {
    state = JSON.parse(readFileSync(path, 'utf8')) as StateFile
  } catch (error) {
    throw new Error(`state file ${path} is not JSON: ${(error as Error).message}`)
  }
  if (state?.version !== 1 || !Array.isArray(state.endpoints) || !Array.isArray(state.deliveries)) {
    throw new Error(`state file ${path} is not an emulator state file`)
  }
  return state
}

/** Writes the state atomically: a temporary file beside it, then a rename over it. */
export function writeStateFile(path: string, state: StateFile): void {
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, JSON.stringify(state))
  renameSync(temporary, path)
}
