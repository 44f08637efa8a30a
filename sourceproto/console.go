package sourceproto

// Console family. Lifecycle frames travel worker → producer, one per
// DevTools session; events travel as "console" items of append batches so
// they share the sequence numbers, gap accounting and acks of every other
// observation.

// ConsoleEnable starts serializing console calls for Session into that
// session's own console object group: one event per call per enabled
// session, so one DevTools window can release its handles without
// invalidating another's.
//
//easyjson:json
type ConsoleEnable struct {
	Session string `json:"session"`
}

// ConsoleDisable stops events for Session and releases its console group.
//
//easyjson:json
type ConsoleDisable struct {
	Session string `json:"session"`
}

// ConsoleDiscard is Runtime.discardConsoleEntries: release Session's
// console group and keep emitting.
//
//easyjson:json
type ConsoleDiscard struct {
	Session string `json:"session"`
}

// ConsoleEvent is one console API call as the producer's realm saw it.
//
//easyjson:json
type ConsoleEvent struct {
	// Session is the DevTools session whose object group owns the handles
	// in Args. Empty when Args hold no handles (primitives and previews
	// only), which is how a host preload or a page with no enabled session
	// reports: such an event may be shown to every session.
	Session string         `json:"session,omitempty"`
	Type    ConsoleType    `json:"type"`
	Args    []RemoteObject `json:"args"`
	// Timestamp is milliseconds since the Unix epoch (CDP
	// Runtime.Timestamp), as the producer's clock read it.
	Timestamp  float64     `json:"timestamp"`
	StackTrace *StackTrace `json:"stackTrace,omitempty"`
	// Context is console.context()'s name, when the call used one.
	Context string `json:"context,omitempty"`
	// URL is the document URL when the call happened; the realm's page is
	// in the hello and in "page" items. The page client leaves it out (the
	// page items keep their place among its console items); the worker
	// reads neither.
	URL string `json:"url,omitempty"`
}
