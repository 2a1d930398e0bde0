import type { AccountState } from '../../account/account-state.js'
import type { Engine } from '../../delivery/engine.js'
import { createAccountRoutes } from './account.js'
import { createApplicationRoutes } from './applications.js'
import { createChannelRoutes } from './channels.js'
import { createDeliveryRoutes } from './deliveries.js'
import { type ConversionDefaults, createEmulatorControlRoutes } from './emulator-control.js'
import { createEndpointEventsRoute } from './endpoint-events.js'
import { createKeyRoutes } from './keys.js'
import { createProgramControlRoutes, createProgramRoutes } from './programs.js'
import type { Route } from './route.js'
import { createWebhookRoutes, type WebhookRouteOptions } from './webhooks.js'

/** What {@link createRoutes} needs besides the engine and the account. */
export interface RouteTableOptions extends WebhookRouteOptions {
  /** programId and channelId of a conversion emitted without them. */
  conversionDefaults?: ConversionDefaults
}

/**
 * Every route of the emulator, one module per resource: the `/v1` API of the
 * spec (account, webhooks, deliveries, applications, programs) and the control
 * routes outside it. The first route whose method and path match answers, so
 * applications come before `/v1/programs/{id}`.
 */
export function createRoutes(
  engine: Engine,
  account: AccountState,
  options: RouteTableOptions,
): Route[] {
  const { conversionDefaults, ...webhookOptions } = options
  return [
    ...createAccountRoutes(account),
    ...createWebhookRoutes(engine, webhookOptions),
    ...createDeliveryRoutes(engine),
    ...createEmulatorControlRoutes(engine, conversionDefaults),
    createEndpointEventsRoute(engine),
    ...createApplicationRoutes(account),
    ...createProgramRoutes(account),
    ...createProgramControlRoutes(account),
    ...createChannelRoutes(account),
    ...createKeyRoutes(account),
  ]
}
