// inspector-worker's Express (and Connect) middleware: the HTML pages this
// app serves get the script tag of the worker's browser client, so they
// join the DevTools window of `inspector-worker run`. For apps that prefer
// explicit wiring to `run --inject` (on by default, which needs none of
// this) or that run with `--inject=false`.
//
//   import inspectorWorker from './inspector-worker-express.mjs';
//   app.use(inspectorWorker());   // before express.static, your routes,
//                                 // and after `compression` if you use it
//
// Get this file with `inspector-worker wiring express >
// inspector-worker-express.mjs` and keep it in your app (it has no
// dependencies), or import it from a checkout (client/js/wiring/).
//
// What a response gets is decided by the worker's preload (its
// globalThis.inspectorWorker.injectResponse, with the rules of --inject:
// text/html only, the tag after <head>, Content-Length fixed, ETag and
// Last-Modified dropped, compressed bodies and blocking CSPs left alone
// with one stderr line), so res.send, res.render, express.static and
// res.write in pieces all work. Under plain `node`, or outside a run, it
// only calls next(): every response is byte-identical.

/**
 * The middleware. Options: none yet.
 * @returns {(req: any, res: any, next: (err?: any) => void) => void}
 */
export default function inspectorWorker() {
  return function inspectorWorkerMiddleware(req, res, next) {
    const iw = /** @type {any} */ (globalThis).inspectorWorker;
    if (iw && typeof iw.injectResponse === 'function') {
      try {
        iw.injectResponse(res);
      } catch (e) {
        // Never into the application: the page just does not join.
      }
    }
    next();
  };
}

export { inspectorWorker };
