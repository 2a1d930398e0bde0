import 'reflect-metadata'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/fastify'
import { Module } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify'

/** The app's own module; the webhook needs nothing from it. */
class AppModule {}
// As `@Module({})` compiles (this repo's tsconfig has no experimentalDecorators).
Module({})(AppModule)

/**
 * NestJS on the Fastify platform: the webhook is a Fastify plugin registered on
 * Nest's Fastify instance, in its own encapsulated context, so Nest's JSON body
 * parser for the app's controllers never touches its bytes.
 */
export async function createApp(options: ReceiverOptions): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), {
    logger: false,
  })
  await app.register(affiliateWebhook as never, { path: '/hooks', ...options })
  return app
}
