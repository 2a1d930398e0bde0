import { conformanceCases, forEachAdapter } from '../support/conformance-cases.js'
import { h3Adapters, koaAdapters } from './conformance-frameworks.js'
import { nestAdapters } from './nest-app.js'

forEachAdapter([...koaAdapters, ...h3Adapters, ...nestAdapters], conformanceCases)
