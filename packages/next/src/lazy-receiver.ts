import { createReceiver, type Receiver, type ReceiverOptions } from '@affiliate-webhooks/core'

/**
 * `next build` evaluates route modules to collect their config, often without the
 * runtime secrets: the receiver (which checks `secret`) is made on the first request.
 */
export function lazyReceiver(options: ReceiverOptions): () => Receiver {
  let receiver: Receiver | undefined
  return () => {
    receiver ??= createReceiver(options)
    return receiver
  }
}
