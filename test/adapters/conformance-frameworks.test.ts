import { conformanceCases, forEachAdapter } from '../support/conformance-cases.js'
import { koaAdapters } from './conformance-frameworks.js'
import { nestAdapters } from './nest-app.js'

forEachAdapter([...koaAdapters, ...nestAdapters], conformanceCases)
