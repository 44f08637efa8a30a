// Package hostnode starts, discovers and dials Node.js inspectors.
//
// It is the plumbing shared by `inspector-worker run`, `serve`, `demo` and
// `trace`: spawn node with --inspect=127.0.0.1:0 (or --inspect-brk) inserted
// after the executable, read the inspector URL from the FIRST
// "Debugger listening on ws://…" line of the child's stderr, recognise Node's
// failure lines, forward signals, report the exit code (128+signal when
// killed), and never leave an orphan. Banner and BannerFilter tell Node's
// inspector banner lines on stderr from the program's, by position (Dial
// announces each session, whose "Debugger attached." is then Node's).
//
// No orphans. Node runs in a process group of its own. However node ends
// (it exits, it is killed, it stops on a forwarded signal, Kill), the whole
// group is SIGKILLed while node is still an unreaped zombie, so the group id
// cannot have been reused: the host's children and grandchildren die with
// it, including those that ignore SIGTERM. When the process that called
// Start dies (even by SIGKILL), node gets a parent-death SIGKILL (Linux), and
// the orphan reaper does the rest: a `/bin/sh -c` script started beside node
// in its own process group, without a parent-death signal, with stdout and
// stderr on /dev/null, reading a pipe whose only write end the caller holds.
// On EOF (the caller is gone) it SIGKILLs node's group and removes
// Options.RemoveIfOrphaned; on "done" (written once the group was killed) it
// exits without acting. Processes that leave the group on purpose (setsid,
// node's spawn({detached: true})) are the exception and survive.
// Start fails with ErrSpawn if /bin/sh cannot run.
// Stop (run --watch) ends node with SIGTERM to its group and SIGKILL after a
// grace, where Kill is SIGKILL at once.
// AttachHost (host.go) is the host realm's own connection to Node: a
// watcher inspector session, beside every window's, that learns when the
// script has finished (NodeRuntime.waitingForDisconnect) and releases the
// host's worker threads (Threads); it never enables Runtime.
// ClaimServer (claim.go) is where, for a command `run` starts as is (npm run
// dev, npx vite), the command's Node processes claim the host role: the
// first gets it and then opens its host channel there.
// Dial opens a WebSocket session to Node's inspector the way Node expects it:
// Host: 127.0.0.1:PORT, no compression, no pings, single text frames, a read
// limit raised deliberately (MaxHostMessage).
//
// It owns the node child process and the TCP connections it dials. It
// speaks CDP only on the watcher's session (the windows' sessions are the
// callers', over the *websocket.Conn that Dial returns), never evaluates
// anything in the host, and never talks to a non-loopback
// address. Unix only (process groups); the parent-death signal, the group
// kill when node exits on its own (it needs waitid's WNOWAIT) and
// TCP_QUICKACK are Linux-only and quietly absent elsewhere.
//
// Spec: the decisions in docs/agent-note.md, "Commands started as is",
// "Host lifecycle" (inspect-wait
// and release, closing sessions, output copiers, no orphans), "Security"
// (loopback only), "Relay cost" (batched writes, frame lengths, exact-size
// reads) and "Consequences" (TCP_QUICKACK on Node's inspector socket).
package hostnode
