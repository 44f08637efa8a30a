// Package cdpproject builds every CDP message the worker says itself: the
// projection of a page's values (RemoteObject, previews, exception details,
// stack traces), its execution contexts, scripts and frames, the answers to
// the Runtime methods a page serves, and the worker's own Log.entryAdded
// lines. Messages are cdproto's types (github.com/chromedp/cdproto) encoded
// with jsonv2 and AllowInvalidUTF8: one encoder, so a name, URL or text
// with quotes, control characters, U+2028 or invalid UTF-8 always makes
// valid JSON the frontend reads back as sent (invalid bytes become U+FFFD).
//
// It owns no state: callers pass what the projection needs (a window's
// objectIds, a page's scriptIds, its context id) as values and functions.
// It never touches sockets, locks or object tables, and it does not decode:
// the page protocol's decoders are sourceproto's.
//
// One message is encoded by hand, Runtime.consoleAPICalled (console.go):
// it is the page ingest hot path, and BenchmarkClientConsoleToDevTools
// shows what the typed path costs there (docs/agent-note.md, "One
// projector"). A test holds the hand encoder to the typed projection.
package cdpproject
