import { adapters } from './conformance-adapters.js'
import { conformanceCases, forEachAdapter } from './conformance-cases.js'
import { queued } from './queue-harness.js'

forEachAdapter(adapters, (adapter) => conformanceCases(adapter, queued))
