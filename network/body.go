package network

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/fetchcapture"
)

// Answers of the body methods. Local types, not cdproto's: its results hold
// []byte, which encodes as base64 always, while CDP sends text as text.
type bodyAnswer struct {
	Body          string `json:"body"`
	Base64Encoded bool   `json:"base64Encoded"`
}

type postDataAnswer struct {
	PostData      string `json:"postData"`
	Base64Encoded bool   `json:"base64Encoded"`
}

type requestParams struct {
	RequestID string `json:"requestId"`
}

// Error is a refusal with a message that says what to do; cdpserver answers
// it as -32000.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

func decodeID(method string, params []byte) (string, error) {
	var p requestParams
	if err := jsonv2.Unmarshal(params, &p); err != nil || p.RequestID == "" {
		return "", &Error{method + ": params must be {\"requestId\": <string>}"}
	}
	return p.RequestID, nil
}

// text decides how a body travels: as text when it is UTF-8, else base64
// (binary). A prefix cut by a budget may end inside a character: that
// partial character is left out rather than sending the whole body base64.
func text(data []byte, truncated bool) (string, bool) {
	if utf8.Valid(data) {
		return string(data), false
	}
	if truncated {
		for cut := 1; cut <= 3 && cut <= len(data); cut++ {
			if utf8.Valid(data[:len(data)-cut]) && !utf8.FullRune(data[len(data)-cut:]) {
				return string(data[:len(data)-cut]), false
			}
		}
	}
	return base64.StdEncoding.EncodeToString(data), true
}

// ResponseBody answers Network.getResponseBody. notice, when set, is a
// Console warning to queue after the answer: the body is truncated, and
// this window was not told about this request yet.
func (w *Window) ResponseBody(params []byte) (answer []byte, notice []byte, err error) {
	const method = "Network.getResponseBody"
	id, err := decodeID(method, params)
	if err != nil {
		return nil, nil, err
	}
	if w.d.j == nil {
		return nil, nil, &Error{method + ": nothing is captured (inspector-worker runs with --no-capture)"}
	}
	b, err := w.d.j.Body(id, true)
	if err := w.foreign(method, id, b.Request); err != nil {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, bodyError(method, id, err)
	}
	s, b64 := text(b.Data, b.Truncated)
	answer, err = cdpproject.Marshal(bodyAnswer{s, b64})
	if err != nil {
		return nil, nil, err
	}
	if b.Truncated && w.firstWarning(id) {
		notice = logEntry("warning", truncationText(b))
	}
	return answer, notice, nil
}

// RequestPostData answers Network.getRequestPostData.
func (w *Window) RequestPostData(params []byte) ([]byte, error) {
	const method = "Network.getRequestPostData"
	id, err := decodeID(method, params)
	if err != nil {
		return nil, err
	}
	if w.d.j == nil {
		return nil, &Error{method + ": nothing is captured (inspector-worker runs with --no-capture)"}
	}
	b, err := w.d.j.Body(id, false)
	if err := w.foreign(method, id, b.Request); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, bodyError(method, id, err)
	}
	s, b64 := text(b.Data, b.Truncated)
	return cdpproject.Marshal(postDataAnswer{s, b64})
}

// foreign refuses a request the window is not shown (a page target's
// window names another page's or the host's request id).
func (w *Window) foreign(method, id string, r *fetchcapture.Request) error {
	if w.keep == nil || r == nil || w.keep(r) {
		return nil
	}
	return &Error{fmt.Sprintf("%s: request %q is not this target's: a page target sees only its own page's requests", method, id)}
}

func (w *Window) firstWarning(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.warned[id]; ok {
		return false
	}
	if len(w.warned) >= maxWarned {
		clear(w.warned)
	}
	w.warned[id] = struct{}{}
	return true
}

func truncationText(b fetchcapture.BodyPart) string {
	url := b.Request.URL
	if b.Response != nil {
		url = b.Response.URL
	}
	why := "the capture's per-body budget (INSPECTOR_WORKER_CAPTURE_BODY_BYTES)"
	if b.By == "journal" {
		why = "the worker's journal byte budget"
	}
	// Total is what the producer saw: the whole body, or only what it read
	// before it cancelled its copy (docs/protocol.md "Items and topics" allows both), so it is worded
	// as that and never as the body's size.
	total := ""
	if b.Total > int64(len(b.Data)) {
		total = fmt.Sprintf("; %d bytes of it reached the capture", b.Total)
	}
	return fmt.Sprintf("[inspector-worker] The response body of %s was truncated at %d bytes by %s%s. The Network panel shows the captured prefix.",
		url, len(b.Data), why, total)
}

// bodyError turns the journal's reasons into answers that say what to do.
func bodyError(method, id string, err error) error {
	switch {
	case errors.Is(err, fetchcapture.ErrBodiesNotRead):
		return &Error{method + ": bodies of node:http/https requests are not captured: reading them would consume the application's streams (only fetch and XMLHttpRequest bodies are)"}
	case errors.Is(err, fetchcapture.ErrUnknownRequest):
		return &Error{fmt.Sprintf("%s: no request %q in the journal: it was evicted (the journal keeps the most recent requests within its budgets) or never captured", method, id)}
	case errors.Is(err, fetchcapture.ErrNotFinished):
		return &Error{method + ": the request has not finished yet; ask again when it has"}
	case errors.Is(err, fetchcapture.ErrNoBody), errors.Is(err, fetchcapture.ErrReleased):
		return &Error{method + ": " + strings.TrimPrefix(err.Error(), "fetchcapture: ")}
	case errors.Is(err, fetchcapture.ErrBrokenBody):
		return &Error{method + ": " + strings.TrimPrefix(err.Error(), "fetchcapture: ")}
	}
	return &Error{method + ": " + err.Error()}
}
