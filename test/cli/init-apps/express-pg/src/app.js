import express from 'express'
import pg from 'pg'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
const app = express()
app.use(express.json())
app.get('/conversions', async (_req, res) => {
  const { rows } = await pool.query('SELECT * FROM affiliate_conversions ORDER BY conversion_id')
  res.json(rows)
})
app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () =>
  console.log('listening'),
)
