// The usual Astro mistake, added to the test's copy only: middleware that reads the
// body for its own purposes (here when the request says so, so the other cases pass).
import { defineMiddleware } from 'astro:middleware'

export const onRequest = defineMiddleware(async (context, next) => {
  if (context.request.headers.get('x-eat-body') === '1') await context.request.json()
  return next()
})
