import { webhook } from '../utils/webhook'

// Every method reaches the handler, which answers 405 to all but POST.
export default webhook
