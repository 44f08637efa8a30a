// Package clientjs ships the JavaScript producers of inspector-worker's
// internal observation protocol (docs/protocol.md, package sourceproto), so
// that the worker binary carries the exact producers it speaks with:
//
//   - client.js: the browser client, served to pages and loaded with
//     <script src=".../client.js" data-endpoint="ws://.../client" data-token="…">;
//     one self-contained classic script (it also works as a module script);
//   - preload.cjs: the Node host preload, loaded by `inspector-worker run`
//     with `node --require <path>`; it speaks the host pipe on the fd named
//     by INSPECTOR_WORKER_FD.
//
// The folder also holds embed.mjs, startInspectorWorker() for an app that
// starts the worker itself (`serve --host-channel-fd`, host pipe on the
// child's fd 3): the app imports it from this folder, the binary never
// serves it, so it is not embedded.
//
// wiring/ holds the explicit wiring for apps that do not rely on `run
// --inject`: express.mjs (a middleware) and vite.mjs (a plugin), small
// hand-written modules without dependencies. They are embedded so that
// `inspector-worker wiring NAME` can print them for the app to keep.
//
// The three generated files (client.js, preload.cjs, embed.mjs) are made,
// whole, by build.mjs from hand-written sources in this folder: a frame per
// file (client.in.js, preload.in.cjs, embed.in.mjs) and the modules each
// frame inlines (core.mjs, runtime.mjs, capture.mjs …; what the tests
// import). Edit those, then run
// `go generate ./client/js/` (or `node client/js/build.mjs`); `node --test
// client/js/` fails on a stale file. The package has no behaviour of its
// own: it only hands out the bytes, a fresh copy per call.
package clientjs

import "embed"

//go:generate node build.mjs

//go:embed client.js preload.cjs
var files embed.FS

// ClientJS returns client.js, the browser client (serve it as
// text/javascript).
func ClientJS() []byte { return read("client.js") }

// PreloadCJS returns preload.cjs, the Node host preload (write it to a file
// and pass it to node with --require).
func PreloadCJS() []byte { return read("preload.cjs") }

//go:embed wiring/express.mjs wiring/vite.mjs
var wiring embed.FS

// WiringNames lists the explicit wiring modules Wiring knows, in order.
func WiringNames() []string { return []string{"express", "vite"} }

// Wiring returns wiring/NAME.mjs (an Express middleware, a Vite plugin),
// or false for an unknown name.
func Wiring(name string) ([]byte, bool) {
	for _, n := range WiringNames() {
		if n == name {
			b, err := wiring.ReadFile("wiring/" + n + ".mjs")
			if err != nil {
				panic("clientjs: wiring/" + n + ".mjs is not embedded: " + err.Error()) // impossible: go:embed checked it at build time
			}
			return b, true
		}
	}
	return nil, false
}

func read(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("clientjs: " + name + " is not embedded: " + err.Error()) // impossible: go:embed checked it at build time
	}
	return b
}
