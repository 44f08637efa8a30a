package trace

import (
	"sync"

	"github.com/go-json-experiment/json"
)

// subscriberQueue bounds the messages waiting for one stream subscriber.
// Overflow policy: the subscriber is dropped and its socket closed with a
// policy-violation status; the session's read loop is never slowed down.
const subscriberQueue = 1024

// hub fans events out to the stream subscribers.
type hub struct {
	mu     sync.Mutex               // Lock order: see docs/locks.md.
	subs   map[*subscriber]struct{} // Guarded by mu.
	closed bool                     // Guarded by mu.
	wg     sync.WaitGroup           // one per subscribed handler; Add only under mu while !closed
}

type subscriber struct {
	filter string        // Static: a session id, or "" for every session.
	ch     chan []byte   // bounded by subscriberQueue
	gone   chan struct{} // closed when the hub drops the subscriber (slow, or shutdown)
	slow   bool          // Guarded by hub.mu; written before gone is closed.
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

func (h *hub) subscribe(filter string) (*subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	sub := &subscriber{filter: filter, ch: make(chan []byte, subscriberQueue), gone: make(chan struct{})}
	h.subs[sub] = struct{}{}
	h.wg.Add(1)
	return sub, nil
}

// unsubscribe is called once by the handler that subscribed.
func (h *hub) unsubscribe(sub *subscriber) {
	h.mu.Lock()
	if _, ok := h.subs[sub]; ok {
		delete(h.subs, sub)
		close(sub.gone)
	}
	h.mu.Unlock()
	h.wg.Done()
}

// wasSlow reports whether the hub dropped sub for not keeping up.
func (h *hub) wasSlow(sub *subscriber) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return sub.slow
}

// publish never blocks. The message is encoded once, and only when someone
// listens.
func (h *hub) publish(sessionID string, ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var msg []byte
	for sub := range h.subs {
		if sub.filter != "" && sub.filter != sessionID {
			continue
		}
		if msg == nil {
			b, err := json.Marshal(StreamMessage{SessionID: sessionID, Event: ev})
			if err != nil {
				return
			}
			msg = b
		}
		select {
		case sub.ch <- msg:
		default:
			sub.slow = true
			delete(h.subs, sub)
			close(sub.gone)
		}
	}
}

// close drops every subscriber and refuses new ones.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for sub := range h.subs {
		delete(h.subs, sub)
		close(sub.gone)
	}
}

// wait returns when every subscribed handler has unsubscribed.
func (h *hub) wait() { h.wg.Wait() }
