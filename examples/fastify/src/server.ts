import { createApp } from './app.js'
import { secret } from './secret.js'
import { store } from './store.js'

const port = Number(process.env.PORT ?? 3000)
const { app } = await createApp(secret, store)
await app.listen({ port })
console.log(`Fastify: webhooks to POST http://localhost:${port}/hooks (try: npm run send)`)
