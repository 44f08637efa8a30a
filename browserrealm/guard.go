package browserrealm

import (
	"context"
	"encoding/json"
	"fmt"
)

// One realm, one backend: a page the browser shows natively must not also
// be observed by the JavaScript agent (client.js) it may load, or its
// console and network would show twice in the window. The worker keeps a
// session of its own on every page target of the browser (the guard,
// Target.setAutoAttach on the browser: existing pages at once, new ones
// paused before their first script until the guard let them run) and
// registers a script that runs before any of the page's in every
// document it loads: on a page whose URL joins, it sets
// window.__inspectorWorkerClient, the client's own loaded-once flag, so the
// client snippet does nothing there. Documents loaded before the worker
// connected keep their client until their next load.

// guardScript builds the script for the join expression re (Go syntax,
// read by JavaScript's RegExp; an expression JavaScript cannot read leaves
// the client running: the page then shows twice, never zero times).
func guardScript(re string) string {
	quoted, _ := json.Marshal(re) // a JSON string is a JavaScript string literal
	return `(function () { try { if (!window.__inspectorWorkerClient && new RegExp(` + string(quoted) + `).test(location.href)) ` +
		`Object.defineProperty(window, '__inspectorWorkerClient', {value: Object.freeze({native: true}), configurable: true}); } catch (e) {} })();`
}

// startGuard asks the browser to attach the worker to every page, waiting
// for the worker before a new page runs.
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
	return nil
}

func (b *Browser) isGuard(sessionID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.guards[sessionID]
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
	b.mu.Lock()
	mine := b.autoOn || p.Waiting
	if mine {
		b.guards[p.SessionID] = true
	}
	b.mu.Unlock()
	if mine {
		go b.guard(p.SessionID, p.TargetInfo.Type, p.Waiting) // calls wait for the read loop: not on it
	}
}

// guard registers the guard script in a page and lets a waiting target run.
func (b *Browser) guard(sessionID, typ string, waiting bool) {
	ctx := context.Background()
	if typ == "page" {
		if _, err := b.call(ctx, sessionID, "Page.enable", nil); err != nil {
			b.logf("browser: Page.enable in a guard session: %v", err)
		}
		if _, err := b.call(ctx, sessionID, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": guardScript(b.match.String())}); err != nil {
			b.logf("browser: a page's client guard was not set (its client may show it twice): %v", err)
		}
	}
	if waiting {
		if _, err := b.call(ctx, sessionID, "Runtime.runIfWaitingForDebugger", nil); err != nil {
			b.logf("browser: a new target was not let run: %v", err)
		}
	}
}
