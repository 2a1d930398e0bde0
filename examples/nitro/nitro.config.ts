import { defineNitroConfig } from 'nitro/config'

// Nitro's defaults: routes/ is the file router, the node-server preset builds
// .output/server/index.mjs, which `npm start` runs.
export default defineNitroConfig({})
