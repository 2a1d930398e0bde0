import type { Program, ProgramInput } from './catalogue.js'
import type { Channel } from './channels.js'

/** What a catalogue file holds, and what the emulator starts with without one. */
export interface CatalogueSeed {
  programs: (ProgramInput & { id?: number })[]
  channels: (Omit<Channel, 'id' | 'own'> & { id?: number; own?: boolean })[]
}

const program = (
  fields: Partial<ProgramInput> & Pick<ProgramInput, 'merchantName' | 'merchantDomain'>,
): ProgramInput => ({
  category: null,
  payoutType: 'cps',
  networkPayout: null,
  payoutUnit: 'percent',
  currency: 'EUR',
  cookieDays: 30,
  approvalType: 'auto',
  supportsDeepLinks: true,
  description: null,
  regions: ['DE', 'AT', 'CH'],
  logoUrl: `https://logo.example/${fields.merchantDomain}.png`,
  ...fields,
})

/**
 * A small catalogue in the shape networks send: categories as sent, rates
 * before the service's cut, some fields missing. Ids start at 40 so that 42 and
 * channel 7 (the ids `buildConversionEvent` uses) exist.
 */
export const DEFAULT_CATALOGUE: CatalogueSeed = {
  channels: [{ id: 7, domain: 'kitchen-notes.example', approved: true, verified: true }],
  programs: [
    program({
      merchantName: 'Nordlicht Outdoor',
      merchantDomain: 'nordlicht-outdoor.example',
      category: 'Sports & Outdoors',
      networkPayout: '10',
      description: 'Tents, packs and rain gear; free returns for 100 days.',
    }),
    program({
      merchantName: 'Kaffeewerk',
      merchantDomain: 'kaffeewerk.example',
      category: 'Food &amp; Drink',
      networkPayout: '8.5',
      approvalType: 'manual',
      description: 'Small-batch roasts on subscription.',
    }),
    program({
      merchantName: 'Pixelhaus',
      merchantDomain: 'pixelhaus.example',
      category: 'Electronics',
      networkPayout: '3.75',
      cookieDays: 14,
      regions: ['DE'],
    }),
    program({
      merchantName: 'Stadtrad Versicherung',
      merchantDomain: 'stadtrad-versicherung.example',
      category: 'Finance / Insurance',
      payoutType: 'cpc',
      networkPayout: '0.35',
      payoutUnit: 'fixed',
      approvalType: 'manual',
      supportsDeepLinks: false,
    }),
    program({
      merchantName: 'Gartenglück',
      merchantDomain: 'gartenglueck.example',
      category: 'Home &amp; Garden',
      networkPayout: '12',
      description: 'Seeds, tools and raised beds.',
    }),
    program({
      merchantName: 'Leseratte',
      merchantDomain: 'leseratte.example',
      category: 'Books',
      networkPayout: '5',
      cookieDays: null,
    }),
    program({
      merchantName: 'Reisefieber',
      merchantDomain: 'reisefieber.example',
      category: 'Travel',
      networkPayout: '45',
      payoutUnit: 'fixed',
      approvalType: 'manual',
      regions: ['DE', 'AT', 'CH', 'NL', 'BE'],
    }),
    program({
      merchantName: 'Mystery Deals',
      merchantDomain: 'mystery-deals.example',
      category: null,
      networkPayout: null,
      payoutUnit: null,
      currency: null,
      cookieDays: null,
      approvalType: null,
      supportsDeepLinks: false,
      regions: [],
      logoUrl: null,
    }),
  ].map((input, index) => ({ ...input, id: 40 + index })),
}

/** The programs of a seed, numbered and dated: the first is the oldest, a minute apart. */
export function seedPrograms(seed: CatalogueSeed, now: number): Program[] {
  let nextId = 1
  return seed.programs.map((input, index) => {
    const id = input.id ?? nextId
    nextId = id + 1
    return {
      ...input,
      id,
      createdAt: now - (seed.programs.length - index) * 60_000,
      active: true,
    }
  })
}

/** The channels of a seed, numbered; the account's own unless `own: false`. */
export function seedChannels(seed: CatalogueSeed): Channel[] {
  let nextId = 1
  return seed.channels.map((channel) => {
    const id = channel.id ?? nextId
    nextId = id + 1
    return { ...channel, id, own: channel.own ?? true }
  })
}
