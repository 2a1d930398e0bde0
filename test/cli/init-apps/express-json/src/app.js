import express from 'express'

const port = Number(process.env.PORT ?? 3000)

const app = express()
app.use(express.json())

app.post('/echo', (req, res) => {
  res.json({ got: req.body })
})

app.listen(port, '127.0.0.1', () => console.log(`listening on ${port}`))
