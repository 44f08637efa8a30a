package network

import (
	"mime"
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	cdpnet "github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/fetchcapture"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The one conversion from journal steps to CDP Network events. Times: the
// producers report milliseconds since the epoch; CDP's timestamp is a
// monotonic time in seconds (any origin) and wallTime seconds since the
// epoch, so both are the producer's clock in seconds. Timing is relative
// to the request's start, as ResourceTiming requires.

func seconds(ms float64) float64 { return ms / 1000 }

// resourceType is the column "Type": Fetch, XHR, or Other for node:http.
func resourceType(k sourceproto.FetchKind) cdpnet.ResourceType {
	switch k {
	case sourceproto.KindXHR:
		return cdpnet.ResourceTypeXHR
	case sourceproto.KindHTTP:
		return cdpnet.ResourceTypeOther
	}
	return cdpnet.ResourceTypeFetch
}

// headers joins repeated names with "\n", as Chrome does (the frontend
// splits on it, e.g. for set-cookie).
func headers(h []sourceproto.HTTPHeader) cdpnet.Headers {
	out := make(cdpnet.Headers, len(h))
	for _, x := range h {
		if prev, ok := out[x.Name]; ok {
			out[x.Name] = prev.(string) + "\n" + x.Value
			continue
		}
		out[x.Name] = x.Value
	}
	return out
}

func headerValue(h []sourceproto.HTTPHeader, name string) string {
	for _, x := range h {
		if strings.EqualFold(x.Name, name) {
			return x.Value
		}
	}
	return ""
}

// initiator is the Initiator column: the caller's stack when the producer
// sent one. A host stack names files by path; the frontend links file://
// URLs (the host's scripts are listed by file:// URL, hostrealm/rewrite.go).
func initiator(r *fetchcapture.Request, scriptID ScriptIDFunc) *cdpnet.Initiator {
	if r.Stack == nil || len(r.Stack.CallFrames) == 0 {
		return &cdpnet.Initiator{Type: cdpnet.InitiatorTypeOther}
	}
	st := &cdpruntime.StackTrace{Description: r.Stack.Description, CallFrames: make([]*cdpruntime.CallFrame, 0, len(r.Stack.CallFrames))}
	for _, f := range r.Stack.CallFrames {
		u := f.URL
		if r.Origin.Role == sourceproto.RoleHost && strings.HasPrefix(u, "/") {
			u = (&url.URL{Scheme: "file", Path: u}).String()
		}
		id := f.ScriptID
		if r.Origin.Process != "" {
			id = "" // another process's V8 id (fetchcapture.Origin.Process)
		}
		if id == "" && scriptID != nil && u != "" {
			id = scriptID(r, u)
		}
		st.CallFrames = append(st.CallFrames, &cdpruntime.CallFrame{
			FunctionName: f.FunctionName, ScriptID: cdp.ScriptID(id), URL: u, LineNumber: f.LineNumber, ColumnNumber: f.ColumnNumber,
		})
	}
	if top := st.CallFrames[0]; top.ScriptID == "" {
		// The frontend links a stack's top frame by scriptId and leaves the
		// cell empty without one (a host script no window has seen parsed
		// yet, at replay); a script location by URL it links by URL.
		return &cdpnet.Initiator{Type: cdpnet.InitiatorTypeScript, URL: top.URL, LineNumber: float64(top.LineNumber), ColumnNumber: float64(top.ColumnNumber)}
	}
	return &cdpnet.Initiator{Type: cdpnet.InitiatorTypeScript, Stack: st}
}

func request(r *fetchcapture.Request, u string) *cdpnet.Request {
	frag := ""
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u, frag = u[:i], u[i:]
	}
	return &cdpnet.Request{
		URL: u, URLFragment: frag, Method: r.Method, Headers: headers(r.Headers), HasPostData: r.HasBody,
		InitialPriority: cdpnet.ResourcePriorityHigh, ReferrerPolicy: cdpnet.RequestReferrerPolicyStrictOriginWhenCrossOrigin,
	}
}

// response converts a response head. start is the request's start (ms).
func response(r *fetchcapture.Response, start, at float64) *cdpnet.Response {
	mt, charset := "", ""
	if ct := headerValue(r.Headers, "content-type"); ct != "" {
		if m, params, err := mime.ParseMediaType(ct); err == nil {
			mt, charset = m, params["charset"]
		}
	}
	out := &cdpnet.Response{
		URL: r.URL, Status: r.Status, StatusText: r.StatusText, Headers: headers(r.Headers), MimeType: mt, Charset: charset,
		SecurityState: "unknown", Protocol: "http/1.1",
		Timing: timing(start, at),
	}
	if r.StatusUnknown {
		out.Protocol = ""
	}
	return out
}

// timing knows two instants: the start and the headers; every phase the
// producer cannot see is -1 (Chrome's "not applicable").
func timing(start, headersAt float64) *cdpnet.ResourceTiming {
	h := headersAt - start
	if h < 0 {
		h = 0
	}
	return &cdpnet.ResourceTiming{
		RequestTime: seconds(start), ProxyStart: -1, ProxyEnd: -1, DNSStart: -1, DNSEnd: -1, ConnectStart: -1, ConnectEnd: -1,
		SslStart: -1, SslEnd: -1, WorkerStart: -1, WorkerReady: -1, WorkerFetchStart: -1, WorkerRespondWithSettled: -1,
		SendStart: 0, SendEnd: 0, PushStart: 0, PushEnd: 0, ReceiveHeadersStart: h, ReceiveHeadersEnd: h,
	}
}

// entryState is what converting one entry's steps needs to remember: the
// current URL (redirects change it) and the start time.
type entryState struct {
	url   string
	start float64
}

// messages converts one step to CDP events. st is the entry's state, created
// by its request step; a step of an entry the window never saw the request
// of (lost while the window was behind) still converts, with what it has.
func messages(s *fetchcapture.Step, st *entryState, scriptID ScriptIDFunc) [][]byte {
	r := s.Request
	id := cdpnet.RequestID(s.RequestID)
	typ := resourceType(r.Kind)
	switch s.Kind {
	case fetchcapture.StepRequest:
		st.url, st.start = r.URL, s.Time
		return [][]byte{cdpproject.Event("Network.requestWillBeSent", &cdpnet.EventRequestWillBeSent{
			RequestID: id, LoaderID: cdp.LoaderID(r.Origin.LoaderID), DocumentURL: r.Origin.DocumentURL,
			Request: request(r, r.URL), Timestamp: cdp.MonotonicTime(seconds(s.Time)), WallTime: cdp.TimeSinceEpoch(seconds(s.Time)),
			Initiator: initiator(r, scriptID), Type: typ, FrameID: cdp.FrameID(r.Origin.FrameID),
		})}
	case fetchcapture.StepRedirect:
		if st.start == 0 {
			st.start = s.Time
		}
		st.url = s.RedirectURL
		return [][]byte{cdpproject.Event("Network.requestWillBeSent", &cdpnet.EventRequestWillBeSent{
			RequestID: id, LoaderID: cdp.LoaderID(r.Origin.LoaderID), DocumentURL: r.Origin.DocumentURL,
			Request: request(r, s.RedirectURL), Timestamp: cdp.MonotonicTime(seconds(s.Time)), WallTime: cdp.TimeSinceEpoch(seconds(s.Time)),
			Initiator: initiator(r, scriptID), RedirectResponse: response(s.Response, st.start, s.Time), Type: typ, FrameID: cdp.FrameID(r.Origin.FrameID),
		})}
	case fetchcapture.StepResponse:
		if st.start == 0 {
			st.start = s.Time
		}
		return [][]byte{cdpproject.Event("Network.responseReceived", &cdpnet.EventResponseReceived{
			RequestID: id, LoaderID: cdp.LoaderID(r.Origin.LoaderID), Timestamp: cdp.MonotonicTime(seconds(s.Time)),
			Type: typ, Response: response(s.Response, st.start, s.Time), FrameID: cdp.FrameID(r.Origin.FrameID),
		})}
	case fetchcapture.StepData:
		return [][]byte{cdpproject.Event("Network.dataReceived", &cdpnet.EventDataReceived{
			RequestID: id, Timestamp: cdp.MonotonicTime(seconds(s.Time)), DataLength: s.DataLength, EncodedDataLength: s.DataLength,
		})}
	case fetchcapture.StepFinished:
		return [][]byte{cdpproject.Event("Network.loadingFinished", &cdpnet.EventLoadingFinished{
			RequestID: id, Timestamp: cdp.MonotonicTime(seconds(s.Time)), EncodedDataLength: float64(s.Finished.ResponseBytes),
		})}
	case fetchcapture.StepFailed:
		return [][]byte{cdpproject.Event("Network.loadingFailed", &cdpnet.EventLoadingFailed{
			RequestID: id, Timestamp: cdp.MonotonicTime(seconds(s.Time)), Type: typ, ErrorText: s.Failure.Message, Canceled: s.Failure.Aborted,
		})}
	}
	return nil
}
