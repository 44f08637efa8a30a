package browserrealm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// One realm, one backend: a page the browser shows natively must not also
// be observed by the JavaScript agent (client.js) it may load, or its
// console and network would show twice in the window. The worker keeps a
// session of its own on every page target of the browser (the guard,
// Target.setAutoAttach on the browser: existing pages at once, new ones
// told as they are created) and registers a script that runs before any of
// the page's in every document it loads: on a page whose URL joins, it sets
// window.__inspectorWorkerClient, the client's own loaded-once flag, so the
// client snippet does nothing there. A document loaded before the guard's
// script was registered keeps its client until its next load: pages open
// before the worker connected, and a tab opened straight on a URL (window.open,
// /json/new) whose first navigation outran the guard — Chromium does not
// hold it (measured: 9 of 14 runs under -race). Open avoids that race for
// the page the worker opens itself (--browser=URL).

// guardState is one page's guard session.
type guardState struct {
	sessionID string
	targetID  string
	url       string        // the target's URL when attached
	done      chan struct{} // closed once the script is registered (or failed to be)
}

// guardScript builds the script for the join expression re (Go syntax,
// read by JavaScript's RegExp; an expression JavaScript cannot read leaves
// the client running: the page then shows twice, never zero times).
func guardScript(re string) string {
	quoted, _ := json.Marshal(re) // a JSON string is a JavaScript string literal
	return `(function () { try { if (!window.__inspectorWorkerClient && new RegExp(` + string(quoted) + `).test(location.href)) ` +
		`Object.defineProperty(window, '__inspectorWorkerClient', {value: Object.freeze({native: true}), configurable: true}); } catch (e) {} })();`
}

// startGuard asks the browser to attach the worker to every page, and
// waits until the pages open now have their script.
func (b *Browser) startGuard(ctx context.Context) error {
	b.mu.Lock()
	b.autoOn = true
	b.mu.Unlock()
	_, err := b.call(ctx, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	b.mu.Lock()
	b.autoOn = false
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("Target.setAutoAttach: %w", err)
	}
	b.started.Wait() // each guard call is bounded by callTimeout
	return nil
}

func (b *Browser) isGuard(sessionID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.guards[sessionID] != nil
}

// noteAttached takes a root Target.attachedToTarget. The guard's are those
// of the browser's auto-attach: at its start (while setAutoAttach is
// answered) or of a new target waiting for the debugger; a window's own
// Target.attachToTarget is announced too, never waiting, and is not the
// guard's.
func (b *Browser) noteAttached(params json.RawMessage) {
	var p struct {
		SessionID  string     `json:"sessionId"`
		TargetInfo targetInfo `json:"targetInfo"`
		Waiting    bool       `json:"waitingForDebugger"`
	}
	if json.Unmarshal(params, &p) != nil || p.SessionID == "" {
		return
	}
	g := &guardState{sessionID: p.SessionID, targetID: p.TargetInfo.TargetID, url: p.TargetInfo.URL, done: make(chan struct{})}
	b.mu.Lock()
	mine := b.autoOn || p.Waiting
	if mine {
		b.guards[g.sessionID], b.guarded[g.targetID] = g, g
		if b.autoOn {
			b.started.Add(1)
		}
	}
	counted := b.autoOn
	b.mu.Unlock()
	if mine {
		go func() { // calls wait for the read loop: not on it
			b.guard(g, p.TargetInfo.Type, p.Waiting)
			if counted {
				b.started.Done()
			}
		}()
	}
}

// guard registers the guard script in a page and lets a waiting target run.
func (b *Browser) guard(g *guardState, typ string, waiting bool) {
	defer close(g.done)
	ctx := context.Background()
	if typ == "page" {
		// Without Page.enable in the session the registered script never
		// ran (3 of 3 runs); the guard's Page events are read and dropped.
		if _, err := b.call(ctx, g.sessionID, "Page.enable", nil); err != nil {
			b.logf("browser: Page.enable in a guard session: %v", err)
		}
		if _, err := b.call(ctx, g.sessionID, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": guardScript(b.match.String())}); err != nil {
			b.logf("browser: a page's client guard was not set (its client may show it twice): %v", err)
		}
	}
	if waiting {
		if _, err := b.call(ctx, g.sessionID, "Runtime.runIfWaitingForDebugger", nil); err != nil {
			b.logf("browser: a new target was not let run: %v", err)
		}
	}
}

// openTimeout bounds Open: a new tab, its guard, the navigation's answer.
const openTimeout = 30 * time.Second

// Open shows url in the browser once its tab's guard script is in place,
// so a page that joins never starts its client: an about:blank tab the
// browser opened at its start, or a new one, navigated to url.
func (b *Browser) Open(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	b.mu.Lock()
	var g *guardState
	for _, c := range b.guarded {
		if c.url == "about:blank" && (g == nil || c.targetID < g.targetID) {
			g = c
		}
	}
	b.mu.Unlock()
	if g == nil {
		res, err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
		if err != nil {
			return fmt.Errorf("open %s: %w", url, err)
		}
		var r struct {
			TargetID string `json:"targetId"`
		}
		_ = json.Unmarshal(res, &r)
		for g == nil {
			b.mu.Lock()
			g = b.guarded[r.TargetID]
			b.mu.Unlock()
			select {
			case <-ctx.Done():
				return fmt.Errorf("open %s: the new tab was not attached in %v", url, openTimeout)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	select {
	case <-g.done:
	case <-ctx.Done():
		return fmt.Errorf("open %s: the tab's guard did not finish in %v", url, openTimeout)
	}
	if _, err := b.call(ctx, g.sessionID, "Page.navigate", map[string]any{"url": url}); err != nil {
		return fmt.Errorf("open %s: %w", url, err)
	}
	return nil
}
