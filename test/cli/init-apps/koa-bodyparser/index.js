import Router from '@koa/router'
import Koa from 'koa'
import bodyParser from 'koa-bodyparser'

const app = new Koa()
const router = new Router()

app.use(async (ctx, next) => {
  const started = Date.now()
  await next()
  ctx.set('X-Response-Time', `${Date.now() - started}ms`)
})
app.use(bodyParser())

router.post('/orders', (ctx) => {
  ctx.body = { got: ctx.request.body }
})
app.use(router.routes())

app.listen(3000)
