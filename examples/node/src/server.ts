import { createApp } from './app.js'
import { secret } from './secret.js'
import { store } from './store.js'

const port = Number(process.env.PORT ?? 3000)
createApp(secret, store).server.listen(port, () => {
  console.log(`node:http: webhooks to POST http://localhost:${port}/hooks (try: npm run send)`)
})
