// inspector-worker's Vite plugin: the dev server's index.html gets the
// script tag of the worker's browser client, so the page joins the DevTools
// window of `inspector-worker run`. For apps that prefer explicit wiring to
// `run --inject` (on by default, which needs none of this) or that run with
// `--inject=false`.
//
//   // vite.config.js
//   import inspectorWorker from './inspector-worker-vite.mjs';
//   export default { plugins: [inspectorWorker()] };
//
// Get this file with `inspector-worker wiring vite >
// inspector-worker-vite.mjs` and keep it in your app (it has no
// dependencies), or import it from a checkout (client/js/wiring/).
//
// Dev server only (`apply: 'serve'`): a build never carries the tag, whose
// token is valid for one run. The tag is prepended to <head> (Vite makes
// one when the page has none) in a 'post' hook, after Vite has added its
// own client, so it comes first in the page and Vite leaves its URL alone;
// a classic script, it runs before the page's own scripts. A page that
// already carries this run's tag is left alone. Under plain `node`, or
// outside a run, the plugin changes nothing.

/**
 * The plugin. Options: none yet.
 * @returns {{name: string, apply: 'serve', transformIndexHtml: {order: 'post', handler: (html: string) => any}}}
 */
export default function inspectorWorker() {
  return {
    name: 'inspector-worker',
    apply: 'serve',
    transformIndexHtml: {
      order: 'post',
      handler(html) {
        const iw = /** @type {any} */ (globalThis).inspectorWorker;
        let tag = '';
        try {
          tag = iw && typeof iw.bootstrapSnippet === 'function' ? String(iw.bootstrapSnippet()) : '';
        } catch (e) {
          // Never into the dev server: the page just does not join.
        }
        const attrs = tagAttrs(tag);
        if (!attrs || html.includes('data-endpoint="' + escapeAttr(attrs['data-endpoint']) + '"')) return html;
        return { html, tags: [{ tag: 'script', attrs, injectTo: 'head-prepend' }] };
      },
    },
  };
}

export { inspectorWorker };

/**
 * The attributes of bootstrapSnippet()'s tag, `<script src="…"
 * data-endpoint="…" data-token="…"></script>`, unescaped (Vite escapes
 * them again), or null when there is no such tag.
 * @param {string} tag
 * @returns {Record<string, string> | null}
 */
export function tagAttrs(tag) {
  if (!/^<script\s[^>]*><\/script>$/.test(tag)) return null;
  /** @type {Record<string, string>} */
  const attrs = {};
  for (const m of tag.matchAll(/\s([a-z-]+)="([^"]*)"/g)) attrs[m[1]] = unescapeAttr(m[2]);
  return attrs.src && attrs['data-endpoint'] ? attrs : null;
}

/** @param {string} s */
function unescapeAttr(s) {
  return s.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The preload's escaping, to find its tag in a page. @param {string} s */
function escapeAttr(s) {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
