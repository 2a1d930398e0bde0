/**
 * The two NestJS recipes of the README, on Nest 11 with platform-express. Vitest
 * compiles with esbuild, which emits no decorator metadata and, without
 * `experimentalDecorators` in this repo's tsconfig, not Nest's legacy decorators
 * either; so the decorators are applied here as the calls TypeScript's legacy
 * decorator output makes. The controller takes nothing by constructor injection,
 * so no metadata is needed.
 */
import 'reflect-metadata'
import type { AddressInfo } from 'node:net'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/express'
import { All, Controller, Module, Req, Res } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import type { NestExpressApplication } from '@nestjs/platform-express'
import type { Request, Response } from 'express'
import { type Adapter, PATH, type Running } from '../support/conformance-adapters.js'

async function listen(app: NestExpressApplication): Promise<Running> {
  await app.listen(0, '127.0.0.1')
  const { port } = app.getHttpServer().address() as AddressInfo
  return { url: `http://127.0.0.1:${port}${PATH}`, close: () => app.close() }
}

const nestOptions = { logger: false, forceCloseConnections: true } as const

/**
 * Recipe 1: a controller route, with `rawBody: true` so Nest's JSON parser keeps
 * `req.rawBody` for the adapter. As source:
 *
 *   @Controller('hooks')
 *   class HooksController {
 *     private readonly webhook = affiliateWebhook({ secret, onConversion })
 *     @All() receive(@Req() req: Request, @Res() res: Response) { this.webhook(req, res, () => {}) }
 *   }
 */
export async function startNestController(
  options: ReceiverOptions,
  { rawBody = true }: { rawBody?: boolean } = {},
): Promise<Running> {
  class HooksController {
    readonly #webhook = affiliateWebhook(options)
    receive(req: Request, res: Response): void {
      this.#webhook(req, res, () => {})
    }
  }
  const { prototype } = HooksController
  Req()(prototype, 'receive', 0)
  Res()(prototype, 'receive', 1)
  All()(
    prototype,
    'receive',
    Object.getOwnPropertyDescriptor(prototype, 'receive') as PropertyDescriptor,
  )
  Controller(PATH.slice(1))(HooksController)
  class AppModule {}
  Module({ controllers: [HooksController] })(AppModule)

  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    ...nestOptions,
    rawBody,
  })
  return listen(app)
}

/**
 * Recipe 2: the Express middleware mounted in main.ts. `app.use` before
 * `listen()` lands in front of the body parser Nest adds at init, so the adapter
 * reads the stream itself.
 */
export async function startNestMiddleware(options: ReceiverOptions): Promise<Running> {
  class AppModule {}
  Module({})(AppModule)
  const app = await NestFactory.create<NestExpressApplication>(AppModule, nestOptions)
  app.use(PATH, affiliateWebhook(options))
  return listen(app)
}

export const nestAdapters: Adapter[] = [
  { name: 'nestjs 11 (app.use in main.ts)', start: startNestMiddleware },
]
