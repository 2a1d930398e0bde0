import express from 'express'

const app = express()
app.use(express.json())
app.get('/', (_req, res) => res.send('ok'))
app.listen(process.env.PORT ?? 3000)
