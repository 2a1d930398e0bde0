/** The endpoint secret from the affiliate dashboard; a fixed one for local runs only. */
export const secret = process.env.AFFILIATE_WEBHOOK_SECRET ?? 'whsec_local_example_only'
