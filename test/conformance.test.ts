import { adapters } from './conformance-adapters.js'
import { conformanceCases, forEachAdapter } from './conformance-cases.js'

forEachAdapter(adapters, conformanceCases)
