import { webhook } from '../lib/webhook'

// A resource route: the action answers POST; the loader sends GET to it too (405).
export const action = ({ request }: { request: Request }) => webhook(request)
export const loader = action
