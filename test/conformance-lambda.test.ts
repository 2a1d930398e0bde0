import { conformanceCases, forEachAdapter } from './conformance-cases.js'
import { lambdaAdapters } from './conformance-serverless.js'

forEachAdapter(lambdaAdapters, conformanceCases)
