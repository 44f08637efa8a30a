package sourceproto

// Item bodies of the other topics. Their domain meaning belongs to the
// packages that consume them (fetchcapture for fetch, realm for page and
// script); this file only fixes their shapes and bounds.

// ScriptInfo announces a script of the producer's realm, so Debugger can
// list it and read it with script.read.
//
//easyjson:json
type ScriptInfo struct {
	URL          string `json:"url"`
	Length       int64  `json:"length,omitempty"`
	SourceMapURL string `json:"sourceMapURL,omitempty"`
	// Hash is a hex content hash chosen by the producer; it lets the
	// worker skip a re-read of an unchanged script.
	Hash string `json:"hash,omitempty"`
}

// AppEvent is an application-defined observation: a name and a bounded
// JSON value.
//
//easyjson:json
type AppEvent struct {
	Name      string  `json:"name"`
	Timestamp float64 `json:"timestamp"`
	Data      RawJSON `json:"data,omitempty"`
}

// FetchEvent is one step of one fetch seen by the host preload. Exactly
// the member named by Phase is set. ID is unique within the source
// generation and groups the steps of one fetch.
//
//easyjson:json
type FetchEvent struct {
	ID        string         `json:"id"`
	Phase     FetchPhase     `json:"phase"`
	Timestamp float64        `json:"timestamp"`
	Request   *FetchRequest  `json:"request,omitempty"`
	Response  *FetchResponse `json:"response,omitempty"`
	Body      *FetchBody     `json:"body,omitempty"`
	Finished  *FetchFinished `json:"finished,omitempty"`
	Failed    *FetchFailure  `json:"failed,omitempty"`
}

// HTTPHeader is one header line; a list keeps order and repeats.
//
//easyjson:json
type HTTPHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// FetchRequest is the request head.
//
//easyjson:json
type FetchRequest struct {
	URL     string       `json:"url"`
	Method  string       `json:"method"`
	Headers []HTTPHeader `json:"headers"`
	HasBody bool         `json:"hasBody,omitempty"`
	// Kind is the API the request was made with; empty means KindFetch
	// (the member is optional, added without a version bump).
	Kind FetchKind `json:"kind,omitempty"`
	// StackTrace is the caller's stack (the CDP Initiator), the shape
	// ConsoleEvent uses, at most MaxStackFrames frames.
	StackTrace *StackTrace `json:"stackTrace,omitempty"`
	// BodiesNotRead says the producer does not read this request's bodies
	// (node:http/https: reading would consume the application's streams).
	BodiesNotRead bool `json:"bodiesNotRead,omitempty"`
}

// EffectiveKind is Kind with the wire default applied.
func (r *FetchRequest) EffectiveKind() FetchKind {
	if r.Kind == "" {
		return KindFetch
	}
	return r.Kind
}

// FetchResponse is the response head.
//
//easyjson:json
type FetchResponse struct {
	URL        string       `json:"url"`
	Status     int64        `json:"status"`
	StatusText string       `json:"statusText"`
	Headers    []HTTPHeader `json:"headers"`
	Redirected bool         `json:"redirected,omitempty"`
	// Type is Response.type ("basic", "cors", "opaque", …).
	Type string `json:"type,omitempty"`
}

// FetchBody is a base64 chunk of a request or response body at Offset.
//
//easyjson:json
type FetchBody struct {
	Part   BodyPart `json:"part"`
	Offset int64    `json:"offset"`
	Data   []byte   `json:"data"`
}

// FetchFinished closes a fetch that completed; Truncated parts kept only
// the prefix their budget allowed.
//
//easyjson:json
type FetchFinished struct {
	RequestBytes      int64 `json:"requestBytes"`
	ResponseBytes     int64 `json:"responseBytes"`
	RequestTruncated  bool  `json:"requestTruncated,omitempty"`
	ResponseTruncated bool  `json:"responseTruncated,omitempty"`
}

// FetchFailure closes a fetch that rejected or was aborted. Message
// carries the error's text and its cause's ("fetch failed: connect
// ECONNREFUSED 127.0.0.1:9"); Aborted is an AbortSignal abort.
//
//easyjson:json
type FetchFailure struct {
	Message string `json:"message"`
	Aborted bool   `json:"aborted,omitempty"`
}
