// The webhook is a Nitro server route; nothing else here is about it.
export default defineNuxtConfig({
  compatibilityDate: '2025-07-15',
  telemetry: false,
  devtools: { enabled: false },
})
