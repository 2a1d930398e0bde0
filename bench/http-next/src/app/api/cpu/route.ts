// CPU time of the server process, µs: the bench divides its growth by the requests served.
export const dynamic = 'force-dynamic'

export function GET(): Response {
  const { user, system } = process.cpuUsage()
  return Response.json({ cpu: user + system })
}
