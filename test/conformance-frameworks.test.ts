import { conformanceCases, forEachAdapter } from './conformance-cases.js'
import { koaAdapters } from './conformance-frameworks.js'

forEachAdapter(koaAdapters, conformanceCases)
