package pagerealm

import (
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/css"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Live edits (docs/agent-note.md "Styles of pages"): the Styles pane sends
// a CSS.setStyleTexts per keystroke and rebuilds the property from each
// answer. A page answers in milliseconds, so keys typed while an edit is
// on its way would otherwise each go to the page and come back as a state
// older than what the user sees. Per style, one edit is in flight; those
// that arrive meanwhile wait, and when it is answered only the newest of
// them goes to the page, and every waiting request is answered, in order,
// with the style as that newest edit left it.

// maxWaitingEdits bounds the requests waiting behind one style's edit in
// flight: far more keystrokes than a page round trip lasts (ClientRuntimeTimeout
// bounds the wait). Overflow policy: the new request is refused by name.
const maxWaitingEdits = 256

// styleKey names one style of a window's page: the page's sheet id and
// the rule's line in its text (0 for an inline style).
type styleKey struct {
	ns    uint64
	sheet string
	line  int64
}

// liveEdits are the requests waiting behind a style's edit in flight.
// Guarded by Hub.mu.
type liveEdits struct {
	waiting []Request
	text    string // the newest waiting request's text
}

// liveEditLocked sends the edit now if none of style k is in flight, or
// queues it to be answered with the newest edit's result.
func (h *Hub) liveEditLocked(w *Window, req Request, n pageNode, k styleKey, text string) error {
	d := &w.client.dom
	if le := d.edits[k]; le != nil {
		if len(le.waiting) >= maxWaitingEdits {
			return fmt.Errorf("%d edits of this style wait for the page %q to answer an earlier one (maxWaitingEdits): wait for its answers", maxWaitingEdits, n.ctx.frame.displayName())
		}
		le.waiting = append(le.waiting, req)
		le.text = text
		return nil
	}
	le := &liveEdits{}
	if err := h.sendEditLocked(w, n, k, le, []Request{req}, text); err != nil {
		return err
	}
	if d.edits == nil {
		d.edits = map[styleKey]*liveEdits{}
	}
	d.edits[k] = le
	return nil
}

// sendEditLocked sends one setStyle command whose result answers reqs.
func (h *Hub) sendEditLocked(w *Window, n pageNode, k styleKey, le *liveEdits, reqs []Request, text string) error {
	c := n.ctx
	if !c.caps.Has(sourceproto.CapDOM) || h.reg == nil {
		return fmt.Errorf("the page %q runs a client agent without DOM support: reload it to load this worker's client.js", c.frame.displayName())
	}
	w.client.dom.markUsed(n.ns)
	cmd := &sourceproto.RuntimeCommand{}
	cmd.SetDOM(sourceproto.MethodDOMCSS, &sourceproto.DOMParams{Doc: n.ns, CSS: sourceproto.CSSSetStyle, Sheet: k.sheet, Line: k.line, Text: text})
	call := &runtimeCall{ref: c.ref, ctx: c, page: c.frame.displayName(), realm: c.realm.ID, sess: w, wire: wireSession(w),
		method: cmd.Method, cdp: "CSS.setStyleTexts", ctxID: c.id, size: len(text) + commandOverhead, domNS: n.ns}
	call.own = func(res *sourceproto.RuntimeResult, why string) { h.editDoneLocked(w, n, k, le, call, reqs, res, why) }
	h.registerLocked(call, cmd)
	if werr := h.admitLocked(c, call); werr != nil {
		h.forgetCallLocked(cmd.ID)
		return werr
	}
	return nil
}

// editDoneLocked answers reqs from the page's result (or why there is
// none), then sends the newest waiting edit, if any.
func (h *Hub) editDoneLocked(w *Window, n pageNode, k styleKey, le *liveEdits, call *runtimeCall, reqs []Request,
	res *sourceproto.RuntimeResult, why string) {
	var events [][]byte
	var answer []byte
	var err error
	switch {
	case res == nil:
		err = errors.New(why)
	case w.client.dom.byNS[k.ns] != n.ctx:
		err = errors.New("the window's document was replaced (DOM.getDocument, or the page reloaded) before the page answered")
	case res.DOMResultOf() == nil:
		err = errors.New("the page answered without a DOM result")
	default:
		events, answer, err = cssAnswer(call, res.DOMResultOf(), setStyleAnswer)
	}
	answerAll(w, reqs, events, answer, err)
	d := &w.client.dom
	if d.edits[k] != le {
		// The document was replaced: the waiting edits name a style of
		// the old one.
		answerAll(w, le.waiting, nil, nil, errors.New("the window's document was replaced (DOM.getDocument, or the page reloaded) before the edit was made"))
		return
	}
	next, text := le.waiting, le.text
	le.waiting, le.text = nil, ""
	if len(next) == 0 {
		delete(d.edits, k)
		return
	}
	if h.byRef[n.ctx.ref] != n.ctx || d.byNS[k.ns] != n.ctx {
		// The page closed or reloaded (its calls are being failed now):
		// answer at once rather than queue on a flow nobody sends.
		delete(d.edits, k)
		answerAll(w, next, nil, nil, fmt.Errorf("the page %q closed or reloaded before the edit was made", n.ctx.frame.displayName()))
		return
	}
	if err := h.sendEditLocked(w, n, k, le, next, text); err != nil {
		delete(d.edits, k)
		answerAll(w, next, nil, nil, err)
	}
}

// answerAll answers each request, in order, with answer or err; events go
// first.
func answerAll(w *Window, reqs []Request, events [][]byte, answer []byte, err error) {
	for _, e := range events {
		w.enqueue(e)
	}
	for _, r := range reqs {
		if err != nil {
			w.enqueue(appendError(nil, r.ID, "", &wireError{codeServerError, r.Method + ": " + err.Error()}))
		} else {
			w.enqueue(appendResult(nil, r.ID, answer))
		}
	}
}

// setStyleAnswer is CSS.setStyleTexts' answer from a setStyle result.
func setStyleAnswer(r *sourceproto.CSSResult, x *cssIDs) any {
	if r.Style == nil {
		x.err = errors.New("the page answered without the edited style")
		return nil
	}
	x.style(r.Style)
	return &css.SetStyleTextsResult{Styles: []*css.Style{r.Style}}
}
