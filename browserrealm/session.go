package browserrealm

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/coder/websocket"
)

// Deliver receives one browser message of a window's session as the
// browser sent it (sessionID is the session it carries: the attached one or
// a nested one); id is the answer's id when isResponse. It is called from
// the browser's read loop and must not block: the window's own bounded
// queue takes it (its overflow policy closes that window, never the
// browser connection).
type Deliver func(msg []byte, sessionID string, isResponse bool, id int64)

// Session is one window's flat session on one page target.
type Session struct {
	b        *Browser
	id       string // the browser's sessionId, used as is in the window
	targetID string
	deliver  Deliver
	gone     func(why string)
	once     sync.Once
}

// Attach gives a window its own session on a page target. deliver gets
// every message of the session (and its nested sessions); gone is called
// once when the session ends without Detach (the page closed, the browser
// went away), after which nothing more is delivered.
func (b *Browser) Attach(ctx context.Context, targetID string, deliver Deliver, gone func(why string)) (*Session, error) {
	res, err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	if err != nil {
		return nil, err
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.SessionID == "" {
		return nil, errors.New("Target.attachToTarget: the browser gave no sessionId")
	}
	s := &Session{b: b, id: r.SessionID, targetID: targetID, deliver: deliver, gone: gone}
	b.mu.Lock()
	if b.closed {
		why := b.reason
		b.mu.Unlock()
		return nil, errors.New("the browser connection ended: " + why)
	}
	// Messages of the session that came before this line are lost: the
	// browser sends none unasked, and the window asks only once told.
	b.subs[s.id], b.byRoot[s.id] = s, s
	b.mu.Unlock()
	return s, nil
}

// ID is the session's id, the same in the browser and in the window.
func (s *Session) ID() string { return s.id }

// TargetID is the page target's id in the browser.
func (s *Session) TargetID() string { return s.targetID }

// Owns says whether sessionID is this session or one nested in it.
func (s *Session) Owns(sessionID string) bool {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.b.subs[sessionID] == s
}

// Send writes a window's request, which carries its sessionId, to the
// browser as it is.
func (s *Session) Send(msg []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	return s.b.conn.Write(ctx, websocket.MessageText, msg)
}

// Detach ends the window's session in the browser (the window closed or
// let the page go); gone is not called.
func (s *Session) Detach() {
	if !s.unregister() {
		return
	}
	_, _ = s.b.call(context.Background(), "", "Target.detachFromTarget", map[string]any{"sessionId": s.id})
}

// end is the browser's side of the end: the page closed or the browser
// went away.
func (s *Session) end(why string) {
	if s.unregister() {
		s.gone(why)
	}
}

// unregister removes the session and its nested ones from routing; it
// reports whether this call did (the first of Detach and end).
func (s *Session) unregister() bool {
	first := false
	s.once.Do(func() { first = true })
	if !first {
		return false
	}
	s.b.mu.Lock()
	for id, o := range s.b.subs {
		if o == s {
			delete(s.b.subs, id)
		}
	}
	delete(s.b.byRoot, s.id)
	s.b.mu.Unlock()
	return true
}
