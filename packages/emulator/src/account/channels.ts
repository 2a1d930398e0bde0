import { ApiError } from '../shared/api-error.js'

/** A publisher site (or similar property) of an account. */
export interface Channel {
  id: number
  domain: string
  /** Approved by the service's team. */
  approved: boolean
  /** The verification step (meta tag) completed. */
  verified: boolean
  /** False for a channel of another account: it exists, but the caller gets 404 for it. */
  own: boolean
}

/** The channels the emulator knows: the account's own, and others' for the 404 case. */
export function createChannels(initial: readonly Channel[] = []) {
  const channels = new Map<number, Channel>(initial.map((channel) => [channel.id, channel]))
  let nextId = Math.max(10, ...initial.map((channel) => channel.id + 1))
  return {
    /** 409 `duplicate_channel` when a channel for this domain exists already. */
    add(input: Omit<Channel, 'id'>): Channel {
      const domain = input.domain.toLowerCase()
      if ([...channels.values()].some((channel) => channel.domain === domain)) {
        throw new ApiError('duplicate_channel', `A channel for ${domain} already exists.`)
      }
      const channel: Channel = { ...input, domain, id: nextId++ }
      channels.set(channel.id, channel)
      return channel
    },
    /** One of the caller's channels, or 404 `channel_not_found` (absent and not-yours alike). */
    own(id: number): Channel {
      const channel = channels.get(id)
      if (!channel?.own)
        throw new ApiError('channel_not_found', `No channel ${id} on this account.`)
      return channel
    },
    /** Every channel, others' too, for the state file. */
    all: (): Channel[] => [...channels.values()],
    /** The caller's channels, oldest first. */
    list: (): Channel[] => [...channels.values()].filter((channel) => channel.own),
  }
}

/** What {@link createChannels} returns. */
export type Channels = ReturnType<typeof createChannels>
