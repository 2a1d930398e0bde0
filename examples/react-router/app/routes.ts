import { type RouteConfig, route } from '@react-router/dev/routes'

export default [route('hooks', 'routes/hooks.ts')] satisfies RouteConfig
