// Replaces examples/react-router/app/routes.ts in the test's copy: the example's
// route, plus /eaten for the usual mistake.
import { type RouteConfig, route } from '@react-router/dev/routes'

export default [
  route('hooks', 'routes/hooks.ts'),
  route('eaten', 'routes/eaten.ts'),
] satisfies RouteConfig
