package cdpserver

import (
	"errors"
	"strings"

	"github.com/inspector-worker/inspector-worker/fetchcapture"
	"github.com/inspector-worker/inspector-worker/network"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The Network domain (package network) on the server's fetch journal. The
// method table (methods.go) sends Network.enable, disable, getResponseBody
// and getRequestPostData here; the other Network settings stay named no-ops.

// newNetwork builds the journal and the domain. The journal names each
// source's frame when the source opens: the host's frame is the target's
// main frame; a page's is the synthetic child frame the client hub made for
// it (the hub is the registry's first consumer, so the frame exists).
func (s *Server) newNetwork() *network.Domain {
	j := fetchcapture.New(fetchcapture.Options{
		MaxEntries: s.opts.JournalMaxEntries, MaxBytes: s.opts.JournalMaxBytes, RedactHeaders: s.opts.RedactHeaders,
		Describe: s.describeSource,
	})
	return network.New(j, s.fetchScriptID)
}

// fetchScriptID names the script of an initiator frame: a page's by the
// hub's "c<n>" ids, the host's by the V8 ids its scriptParsed events
// carried (the same in every Node session of the isolate). It runs on a
// network window's drain or replay, with no window lock held, and takes
// the hub's lock (docs/locks.md).
func (s *Server) fetchScriptID(r *fetchcapture.Request, u string) string {
	if r.Origin.Process != "" {
		return "" // a child's scripts are not the host's: linked by URL
	}
	if r.Origin.Role == sourceproto.RoleHost {
		return s.hostScripts.ID(u)
	}
	return s.clients.ScriptIDFor(r.Source, u)
}

// describeSource runs in the journal's SourceOpened, under no registry
// lock and before the journal's, and takes the hub's (docs/locks.md).
func (s *Server) describeSource(info sourceproto.SourceInfo) fetchcapture.Origin {
	main := s.mainFrame()
	if info.Ref.Role == sourceproto.RoleHost {
		o := fetchcapture.Origin{FrameID: string(main.ID), LoaderID: string(main.LoaderID), DocumentURL: main.URL}
		if pid, ok := strings.CutPrefix(info.Ref.ID, ChildSourcePrefix); ok {
			o.Process = "child process pid " + pid
		}
		return o
	}
	if f, ok := s.clients.FrameOf(info.Ref); ok {
		return fetchcapture.Origin{FrameID: string(f.ID), LoaderID: string(f.LoaderID), DocumentURL: f.URL}
	}
	// A page the hub does not know (a registry built without it): a frame
	// id of its own, still distinct from the host's.
	id := s.targetID + ".client-" + info.Ref.ID
	return fetchcapture.Origin{FrameID: id, LoaderID: id}
}

// ChildSourcePrefix starts the source id of a followed child process's
// capture channel ("child-<pid>", host role). Its requests are shown in
// the main target's Network panel with the host's, in the main frame: the
// stock frontend lists every target's requests in one Network panel
// anyway, a child's worker-type target would have to answer Network.* in
// its own session (today relayed to the child's inspector, which has no
// Network domain on Node 20), and the child's script URL in the Initiator
// column names where the request came from.
const ChildSourcePrefix = "child-"

// FetchConsumer is the sourceproto.Consumer that records fetch items into
// the journal; nil when Options.NoCapture is set (fetch items are then
// ignored and the journal stays empty). Pass it to sourceproto.NewRegistry
// after ClientConsumer (NewRegistry leaves nils out).
func (s *Server) FetchConsumer() sourceproto.Consumer {
	if s.opts.NoCapture {
		return nil
	}
	return s.network.Journal()
}

// Journal is the server's fetch journal (for tests and statistics).
func (s *Server) Journal() *fetchcapture.Journal { return s.network.Journal() }

// networkOutput queues a window's Network events: lossy, like client
// console messages (observations, never answers): a window that falls
// behind the traffic loses counted events and is told, rather than being
// closed. The loss notice goes ahead of the backlog (pushFront).
type networkOutput struct{ s *Session }

func (o networkOutput) Event(msg []byte) bool { return o.s.out.pushLossy(msg) }
func (o networkOutput) Notice(msg []byte)     { _ = o.s.out.pushFront(msg) }

func networkEnable(s *Session, req request) {
	s.net.Enable()
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

func networkDisable(s *Session, req request) {
	s.net.Disable()
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

func networkGetResponseBody(s *Session, req request) {
	answer, notice, err := s.net.ResponseBody(req.Params)
	if err != nil {
		s.refuse(req, networkError(err))
		return
	}
	s.enqueue(appendResult(nil, req.ID, answer))
	if notice != nil {
		s.enqueue(notice)
	}
}

func networkGetRequestPostData(s *Session, req request) {
	answer, err := s.net.RequestPostData(req.Params)
	if err != nil {
		s.refuse(req, networkError(err))
		return
	}
	s.enqueue(appendResult(nil, req.ID, answer))
}

func networkError(err error) *wireError {
	var ne *network.Error
	if errors.As(err, &ne) {
		return &wireError{codeServerError, ne.Message}
	}
	return &wireError{codeInternal, err.Error()}
}
