export { type AppRouteHandler, affiliateWebhook, type NextWebhookOptions } from './app-router.js'
export { affiliateWebhookPages } from './pages-router.js'
