import node from '@astrojs/node'
import { defineConfig } from 'astro/config'

// Server output on Node: the webhook is an on-demand endpoint, never prerendered.
export default defineConfig({
  output: 'server',
  adapter: node({ mode: 'standalone' }),
})
