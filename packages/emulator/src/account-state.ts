import { type Applications, createApplications } from './applications.js'
import { type Catalogue, createCatalogue } from './catalogue.js'
import { type Channels, createChannels } from './channels.js'
import { type CatalogueSeed, seedChannels, seedPrograms } from './default-catalogue.js'
import { createKeyRegistry, type KeyRegistry } from './key-registry.js'
import type { ApiKey } from './keys.js'

/** Everything of the one publisher account beyond webhooks: catalogue, channels, applications, keys. */
export interface AccountState {
  catalogue: Catalogue
  channels: Channels
  applications: Applications
  keys: KeyRegistry
}

/** The account's state on the emulator's clock, seeded with a catalogue and the given keys. */
export function createAccountState(options: {
  now: () => number
  seed: CatalogueSeed
  keys: readonly ApiKey[]
}): AccountState {
  const catalogue = createCatalogue(options.now, seedPrograms(options.seed, options.now()))
  const channels = createChannels(seedChannels(options.seed))
  return {
    catalogue,
    channels,
    applications: createApplications(catalogue, channels, options.now),
    keys: createKeyRegistry(options.keys, options.now),
  }
}
