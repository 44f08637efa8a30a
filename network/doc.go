// Package network is the CDP Network domain of every DevTools window, built
// from the fetch journal (package fetchcapture) with cdproto's network types.
//
// It owns, per window (Window): the Network enable state, the window's
// subscription to the journal (Network.enable replays the journal, then
// streams live steps, exactly once across the cut-over), the loss notices
// of a window that falls behind, and which truncated bodies the window was
// already warned about. Network.getResponseBody and
// Network.getRequestPostData read the journal.
//
// It never writes to a socket: a window's messages go through its Output
// (cdpserver queues them on the session's writer). It never touches the
// journal's recording side. Host entries carry the host frame's ids, page
// entries their page's synthetic frame id (fetchcapture.Origin), so a reader
// can tell host from page. Spec: docs/agent-note.md "Network domain and
// fetch journal".
package network
