import { adapters } from '../support/conformance-adapters.js'
import { conformanceCases, forEachAdapter } from '../support/conformance-cases.js'

forEachAdapter(adapters, conformanceCases)
