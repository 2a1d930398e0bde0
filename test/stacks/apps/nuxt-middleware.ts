// The usual Nuxt mistake, added to the test's copy only: server middleware that reads
// the body through a Web Request of the event (here when the request says so).
import { defineEventHandler, getRequestHeader, toWebRequest } from 'h3'

export default defineEventHandler(async (event) => {
  if (getRequestHeader(event, 'x-eat-body') === '1') await toWebRequest(event).json()
})
