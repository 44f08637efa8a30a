package fetchcapture

import "github.com/inspector-worker/inspector-worker/sourceproto"

// StepKind names one normalised step of a request's life. The journal turns
// the producer's phases into these (redirect hops resolved), so a reader
// projects them without look-ahead.
type StepKind uint8

const (
	// StepRequest starts an entry: Request is set.
	StepRequest StepKind = iota + 1
	// StepRedirect is a redirect hop: Response is the 3xx answer to the
	// previous URL, RedirectURL the URL requested next.
	StepRedirect
	// StepResponse is the final response head: Response is set.
	StepResponse
	// StepData is DataLength more response body bytes reached the worker
	// (including bytes the journal did not keep).
	StepData
	// StepFinished ends the entry successfully: Finished is set.
	StepFinished
	// StepFailed ends the entry with an error: Failure is set.
	StepFailed
	// StepNotice belongs to no entry: Notice tells the readers, once, that
	// the journal dropped a source's entries for another source's (budget.go).
	// Live subscribers only; snapshots have none. RequestID and Request are
	// empty.
	StepNotice
)

// Origin says where an entry comes from, as the reader (package network)
// needs it: the frame and loader ids of the host's frame or of the page's
// synthetic frame. Options.Describe computes it once per source generation.
type Origin struct {
	Role     sourceproto.Role
	FrameID  string
	LoaderID string
	// DocumentURL is the URL of the document the request is made for: the
	// page's, or the host frame's.
	DocumentURL string
	// Process names the host's child process the request was made in
	// ("child process pid N"), "" for the host itself and pages. Its
	// stack's scriptIds are that process's V8 ids, meaningless in the
	// target the entry is shown in, so they are not sent.
	Process string
}

// Request is a request head as recorded (headers already redacted). It is
// immutable once published in a Step.
type Request struct {
	Source        sourceproto.SourceRef
	Origin        Origin
	URL           string
	Method        string
	Headers       []sourceproto.HTTPHeader
	HasBody       bool
	Kind          sourceproto.FetchKind
	Stack         *sourceproto.StackTrace
	BodiesNotRead bool
}

// Response is a response head as recorded (headers already redacted);
// immutable once published. StatusUnknown marks the hop the journal makes up
// when the producer only knew that a redirect happened (redirected:true).
type Response struct {
	URL           string
	Status        int64
	StatusText    string
	Headers       []sourceproto.HTTPHeader
	Redirected    bool
	Type          string
	StatusUnknown bool
}

// Finished is the end of a successful entry.
type Finished struct {
	RequestBytes      int64
	ResponseBytes     int64
	RequestTruncated  bool
	ResponseTruncated bool
}

// Failure is the end of a failed entry.
type Failure struct {
	Message string
	// Aborted: an AbortSignal abort (CDP canceled).
	Aborted bool
}

// Step is one published step of one entry; all pointers are immutable.
// Time is the producer's clock in milliseconds since the epoch (request =
// start, response = headers received, finished/failed = end), or the
// worker's for steps the journal makes (a source that closed).
type Step struct {
	Kind        StepKind
	RequestID   string
	Time        float64
	Request     *Request  // StepRequest; also set on every step, for the reader's context
	Response    *Response // StepRedirect, StepResponse
	RedirectURL string    // StepRedirect
	DataLength  int64     // StepData
	Finished    *Finished // StepFinished
	Failure     *Failure  // StepFailed
	Notice      string    // StepNotice
	// cost is what a subscriber's queue holding this step pins (heads it
	// points at), for the queue's byte bound.
	cost int64
}

// Entry is one request in a snapshot: its steps so far, with the response
// body's data steps merged into one.
type Entry struct {
	RequestID string
	Steps     []Step
}
