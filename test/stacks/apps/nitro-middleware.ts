// The usual Nitro 3 mistake, added to the test's copy only: middleware that reads
// the request's body (here when the request says so). h3 2 keeps no copy of it.
import { defineHandler } from 'h3'

export default defineHandler(async (event) => {
  if (event.req.headers.get('x-eat-body') === '1') await event.req.json()
})
