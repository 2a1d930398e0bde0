import { conformanceCases, forEachAdapter } from '../support/conformance-cases.js'
import { lambdaAdapters } from './conformance-serverless.js'

forEachAdapter(lambdaAdapters, conformanceCases)
