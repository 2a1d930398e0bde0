import type { ApiKey } from './api-keys.js'
import { type Application, type Applications, createApplications } from './applications.js'
import { type Catalogue, createCatalogue, type Program } from './catalogue.js'
import { type Channel, type Channels, createChannels } from './channels.js'
import { type CatalogueSeed, seedChannels, seedPrograms } from './default-catalogue.js'
import { createKeyRegistry, type KeyRegistry, type KeyRegistrySnapshot } from './key-registry.js'

/** Everything of the one publisher account beyond webhooks: catalogue, channels, applications, keys. */
export interface AccountState {
  catalogue: Catalogue
  channels: Channels
  applications: Applications
  keys: KeyRegistry
  /** Everything above as the state file keeps it. */
  snapshot(): AccountSnapshot
}

/** The account's part of the state file. */
export interface AccountSnapshot extends KeyRegistrySnapshot {
  programs: Program[]
  channels: Channel[]
  applications: Application[]
}

/**
 * The account's state on the emulator's clock: from the state file when it
 * has one (a restart loses nothing), else seeded with a catalogue and the given keys.
 */
export function createAccountState(options: {
  now: () => number
  seed: CatalogueSeed
  keys: readonly ApiKey[]
  saved?: AccountSnapshot | undefined
}): AccountState {
  const { saved, now } = options
  const catalogue = createCatalogue(now, saved?.programs ?? seedPrograms(options.seed, now()))
  const channels = createChannels(saved?.channels ?? seedChannels(options.seed))
  const applications = createApplications(catalogue, channels, now, saved?.applications)
  const keys = createKeyRegistry(options.keys, now, saved)
  return {
    catalogue,
    channels,
    applications,
    keys,
    snapshot: () => ({
      ...keys.snapshot(),
      programs: catalogue.all(),
      channels: channels.all(),
      applications: applications.list(),
    }),
  }
}
