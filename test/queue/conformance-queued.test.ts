import { adapters } from '../support/conformance-adapters.js'
import { conformanceCases, forEachAdapter } from '../support/conformance-cases.js'
import { queued } from './queue-harness.js'

forEachAdapter(adapters, (adapter) => conformanceCases(adapter, queued))
