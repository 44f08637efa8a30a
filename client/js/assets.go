// Package clientjs ships the JavaScript producers of inspector-worker's
// internal observation protocol (docs/protocol.md, package sourceproto), so
// that the worker binary carries the exact producers it speaks with:
//
//   - client.js: the browser client, served to pages and loaded with
//     <script src=".../client.js" data-endpoint="ws://.../client" data-token="…">;
//     one self-contained classic script (it also works as a module script);
//   - preload.cjs: the Node host preload, loaded by `inspector-worker run`
//     with `node --require <path>`; it speaks the host pipe on the fd named
//     by INSPECTOR_WORKER_FD;
//   - embed.mjs: startInspectorWorker(), for an app that starts the worker
//     itself (`serve --host-inspector`, host pipe on the child's fd 3).
//
// Each file is self-contained: build.mjs inlines the shared protocol core
// (core.mjs, which is not shipped) into all three, and `node --test
// client/js/` checks the copies are current. The package has no behaviour
// of its own: it only hands out the bytes, a fresh copy per call.
package clientjs

import "embed"

//go:embed client.js preload.cjs embed.mjs
var files embed.FS

// ClientJS returns client.js, the browser client (serve it as
// text/javascript).
func ClientJS() []byte { return read("client.js") }

// PreloadCJS returns preload.cjs, the Node host preload (write it to a file
// and pass it to node with --require).
func PreloadCJS() []byte { return read("preload.cjs") }

// EmbedMJS returns embed.mjs, the module an app imports to start the worker
// itself.
func EmbedMJS() []byte { return read("embed.mjs") }

func read(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("clientjs: " + name + " is not embedded: " + err.Error()) // impossible: go:embed checked it at build time
	}
	return b
}
