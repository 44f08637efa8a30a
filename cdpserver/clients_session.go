package cdpserver

// The entry points the method table (methods.go) calls for answers that
// involve client realms. The hub does the work under its own lock.

// pageEnable and pageResourceTree answer under the hub's lock, so frame
// events and the tree agree.
func pageEnable(s *Session, req request) { s.srv.clients.pageRequest(s, req) }

func pageResourceTree(s *Session, req request) { s.srv.clients.pageRequest(s, req) }

// pageDisable stops the window's frame events.
func pageDisable(s *Session, req request) {
	s.srv.clients.setFlag(s, req.Method)
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

// runtimeEnabled (clients_replay.go) runs once the host's successful answer
// to Runtime.enable is queued: the client contexts and console replay follow
// the answer.

// debuggerEnabled runs on the host's successful answer, before it is
// queued: the client scripts come first, as V8 does for its own.
func debuggerEnabled(s *Session, _ string) { s.srv.clients.debuggerEnabling(s) }

// clientFlagOff runs on the host's successful answer to Runtime.disable or
// Debugger.disable.
func clientFlagOff(s *Session, method string) {
	if method == "Runtime.disable" {
		s.srv.clients.runtimeDisabled(s)
		return
	}
	s.srv.clients.setFlag(s, method)
}

// discardClientConsole forgets the client replay buffers and the window's
// page console objects; the request is then relayed so the host discards
// its own.
func discardClientConsole(s *Session, _ request) {
	s.srv.clients.discardConsole()
	s.srv.clients.discardConsoleFor(s)
}
