// koa2 is `npm:koa@^2`; its API is Koa 3's for everything these tests use.
declare module 'koa2' {
  import Koa from 'koa'
  export default Koa
}
