package sourceproto

// Semantic queries: non-CDP questions the worker asks a producer's realm
// (a framework's component tree, the DOM node behind a context object).
// Names and payloads are defined by the realm adapters that use them; the
// protocol fixes correlation and bounds.

// QueryRequest asks Name with Params. Session is set when the answer may
// hold handles for that DevTools session.
//
//easyjson:json
type QueryRequest struct {
	Session string  `json:"session,omitempty"`
	ID      uint64  `json:"id"`
	Name    string  `json:"name"`
	Params  RawJSON `json:"params,omitempty"`
}

// QueryResult answers a QueryRequest: exactly one of Result and Error.
// Session, ID and Name repeat the request's.
//
//easyjson:json
type QueryResult struct {
	Session string          `json:"session,omitempty"`
	ID      uint64          `json:"id"`
	Name    string          `json:"name"`
	Result  RawJSON         `json:"result,omitempty"`
	Error   *TransportError `json:"error,omitempty"`
}
