// Package trace is the failure-trace engine: it runs a Node program under the
// inspector, captures scripts, console, exceptions, output and exit, and builds
// a correlation-aware evidence chain with an explicit confidence and caveat.
//
// Spec: docs/trace.md (CLI, HTTP API, JSON schema, confidence rules, caps,
// threat notes). Decisions: docs/agent-note.md, "Failure trace (trace/)".
//
// # What it owns
//
//   - Engine: the session table (at most MaxSessions; the oldest finished
//     session is evicted), the workspace containment check, the node
//     executable (resolved once), and the stream hub.
//   - Per session: the node child (through hostnode.Start, always with
//     --inspect-brk=127.0.0.1:0 --enable-source-maps --require PRELOAD,
//     stdin closed), ONE
//     inspector WebSocket (through hostnode.Dial), a ring of at most
//     MaxEvents events, the stderr tail, and the lifecycle
//     starting → running → exited | failed | stopped.
//   - The mapper (mapper.go, sourcemap.go): the one place where a V8 URL
//     becomes a path (file:// and absolute paths only; node:internal, eval
//     and every other scheme are filtered) and a 0-based CDP position becomes
//     a 1-based Location, through a source map when the script has one.
//   - The preload (preload.cjs, preload.go, children.go): one temporary
//     file per engine. It strips --inspect* from process.execArgv so no
//     child inherits a debugger wait, gives every child it spawns the
//     preload (NODE_OPTIONS) and the follow variables, and reports the
//     children (and, with node --test, failed tests) through the inspector
//     console; the engine accepts such reports only from the preload's own
//     script.
//   - Following children (follow.go, follower.go): one loopback
//     registration listener per engine; per session a follow token (never
//     logged or reported) and at most Options.MaxFollowed children followed
//     at once, each through ONE inspector WebSocket of its own. A child
//     opens its inspector and waits for the engine (bounded by
//     Options.FollowWait) before its first line; refused, unanswered or past
//     the cap, it closes the inspector and runs free, and its Child.Note
//     says why.
//   - The evidence builder (evidence.go) and the HTTP API (http.go,
//     hub.go) with its text and JSON renderings (text.go, types.go).
//
// # What it never does
//
// It never evaluates anything in the target or a child (no
// Runtime.evaluate, no callFunctionOn), never calls Runtime.getProperties,
// never stores an objectId: values are the shallow previews V8 sends with each event,
// capped at 500 characters. The only commands it sends are Runtime.enable,
// Debugger.enable, Runtime.runIfWaitingForDebugger (the target only),
// Debugger.resume (the trace never lets the target or a followed child stay
// paused), Runtime.discardConsoleEntries
// (so Node's own console store does not keep logged objects alive) and
// Runtime.getIsolateId (a harmless probe whose answer proves that every
// earlier event has been read). It never interprets the target's stderr
// after the start: the end of the script comes from the protocol (the main
// context's destruction), and Node's banners are dropped by position only
// (output.go), so text a target prints can neither steer the engine nor be
// lost. It never reads files outside the workspace
// (source maps included) and never starts a target outside it. It does not
// own the HTTP listener: the routes are mounted on the worker's endpoint
// (cdpserver.Options.Mount), which provides the loopback bind and the
// Host-header check; this package adds an Origin and Content-Type check to
// the endpoints that start and stop processes.
//
// # Source maps: why the engine decodes them itself
//
// Node's --enable-source-maps only rewrites Error.stack TEXT. Every CDP event
// (scriptParsed, consoleAPICalled, exceptionThrown and their call frames)
// still carries the GENERATED position. Two ways were possible: parse the
// source-mapped stack text of the exception, or decode the .map files. The
// engine decodes them (a bounded VLQ decoder, sourcemap.go), because:
//
//   - The confidence rule compares the failure's file with the immediate
//     cause's file. The cause is usually a console call, whose position only
//     a decoder can map; mapping only the failure would put the two in
//     different coordinates and turn every TypeScript failure into "medium".
//   - Stack text is fragile: a custom Error.prepareStackTrace in the target
//     disables Node's rewrite (node#29994, node#50733), thrown non-Errors have
//     no stack, and a message may itself contain lines that look like frames.
//
// The decoder reads Source Map v3 files inline (data: URLs) or next to the
// script, only inside the workspace, at most 8 MiB per map and 64 MiB per
// session; index maps (sections) and non-file sources (webpack://) stay
// unmapped, and the script event says why. The stack text Node rewrote is
// still kept (Event.Stack, user frames only) for people to read.
//
// # Goroutines
//
// Per session: controlLoop (the only writer to the inspector socket; owns the
// lifecycle from the attach to the end) and readLoop (decodes inspector
// messages, stores events); hostnode's stdout/stderr copiers call the
// session's outputWriters. Per followed child: its follower's controlLoop
// and readLoop, ended by the child's end or the session's (closeFollowers,
// before the session finishes). Per engine: the registration server's
// Serve and its handlers (net/http), which start followers. Per stream subscriber: its HTTP handler, the only
// writer to that socket. Engine.Shutdown stops and waits for all of them.
package trace
