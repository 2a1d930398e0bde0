export default function Root() {
  return null
}
