package sourceproto

// Every bound the protocol enforces, with its reason. docs/protocol.md,
// "Limits", lists the same table; a change here is a protocol change and
// needs a Version bump when it makes a previously valid frame invalid.
const (
	// MaxFrameBytes bounds one frame on either carrier. Carriers use it as
	// their read limit (the WebSocket read limit, the pipe line length), so
	// a frame is refused before it is buffered whole. 1 MiB holds a full
	// batch of ordinary console events (~1 KiB each) and sixteen script
	// chunks, and keeps the per-source decode memory small.
	MaxFrameBytes = 1 << 20

	// MaxDepth bounds JSON nesting inside a frame. The envelope scanner
	// enforces it before any body decoder recurses, so a hostile frame
	// cannot drive deep recursion; 64 leaves room for returnByValue values
	// while the deepest typed shape (an entry preview inside a property
	// preview inside a console argument) needs about 14.
	MaxDepth = 64

	// MaxFrameObjects bounds the number of JSON objects in one frame. Each
	// object decodes to at most one Go allocation, so this caps what a
	// frame of "{}" repeated can cost (~16k small structs) before the
	// per-field limits below are even checked.
	MaxFrameObjects = 1 << 14

	// MaxStringBytes bounds every JSON string in a frame, measured in raw
	// (escaped) bytes. The scanner checks it for all strings at once, so no
	// field can be used to smuggle a large blob. It equals the base64 size
	// of MaxChunkBytes; producers truncate longer console strings, as V8
	// itself does for previews.
	MaxStringBytes = 64 << 10

	// MaxIDBytes bounds source ids, DevTools session ids, object handles,
	// object group names and query names: identifiers that are echoed in
	// many frames and used as map keys. 128 fits a UUID with a prefix.
	MaxIDBytes = 128

	// MaxSafeInteger is the largest integer a JavaScript producer can
	// represent exactly (2^53-1). Generations, sequence numbers, request ids
	// and offsets above it are rejected as malformed rather than silently
	// rounded by the producer.
	MaxSafeInteger = 1<<53 - 1

	// MaxBatchItems bounds the items in one append or replace. It is the
	// producer's flush size: on the host pipe one batch is in flight, so it
	// also bounds the work between two acks.
	MaxBatchItems = 512

	// MaxAckDelayMs bounds a hello's ackDelayMs: how long a coalesced ack
	// may wait. A producer's window is counted in frames, so a longer wait
	// would only hide a stalled worker.
	MaxAckDelayMs = 1000

	// AckCoalesceFrames: with coalesced acks (Hello.AckDelayMs), the worker
	// acks at once when this many appends wait for their ack. The page
	// client keeps 16 in flight, so it never waits for the delay.
	AckCoalesceFrames = 8

	// MaxConsoleArgs bounds the arguments of one console call. DevTools
	// renders arguments inline; beyond this a producer truncates.
	MaxConsoleArgs = 64

	// MaxStackFrames bounds a stack trace. V8's default is 10 frames and
	// DevTools asks for at most 200 async frames; a client page reports its
	// own Error().stack, cut to this.
	MaxStackFrames = 64

	// MaxPreviewItems bounds the properties and the entries of one object
	// preview. V8 previews at most 100 array indices and 5 properties; this
	// leaves headroom for a page's own previewer.
	MaxPreviewItems = 128

	// MaxPreviewDepth bounds preview nesting (valuePreview, entry key/value
	// previews). V8 nests one level; two are allowed.
	MaxPreviewDepth = 2

	// MaxProperties bounds the descriptors in one getProperties result
	// (own, internal and private together). DevTools pages large arrays
	// through callFunctionOn, so a longer list is a producer bug.
	MaxProperties = 4096

	// MaxValueBytes bounds one raw JSON value (returnByValue results,
	// call arguments, app event data, query params and results). It keeps
	// a by-value result well inside MaxFrameBytes.
	MaxValueBytes = 256 << 10

	// MaxChunkBytes bounds the decoded bytes of one script or fetch body
	// chunk (base64 on the wire: exactly MaxStringBytes). Small chunks let
	// a long read interleave with console traffic on one connection.
	MaxChunkBytes = 48 << 10

	// MaxScriptBytes bounds one reassembled script (a client bundle with an
	// inline source map is the largest expected).
	MaxScriptBytes = 16 << 20

	// MaxHeaders bounds the headers of one fetch request or response.
	MaxHeaders = 256

	// MaxCallArguments bounds callFunctionOn arguments.
	MaxCallArguments = 64

	// MaxScopeNames bounds a globalLexicalScopeNames result.
	MaxScopeNames = 4096

	// MaxDOMEvents bounds the events of one dom.event frame. The page
	// agent flushes a session's mutations in frames of at most this many,
	// and past MAX_EVENTS_PER_FLUSH events in one flush it sends
	// documentUpdated instead (client/js/dom.mjs).
	MaxDOMEvents = 1024

	// MaxDOMPush bounds the nodes of one domPush (DOM.pushNodesBy…
	// asks for the nodes one view shows, a few dozen).
	MaxDOMPush = 1024

	// MaxDOMListeners bounds the listeners of one domListeners answer (a
	// subtree asked with depth -1 can hold many; the frame limits bound
	// the bytes, this the decoder's work).
	MaxDOMListeners = 4096

	// MaxDOMClassNames bounds a domClasses answer (the Styles pane's
	// class-toggle completions: a page with more distinct class names
	// than this gets the first ones in document order).
	MaxDOMClassNames = 4096

	// MaxSources bounds the live sources of one Registry: every source is
	// an execution context in every DevTools window, and every source holds
	// per-source state in the worker.
	MaxSources = 256

	// MaxConsecutiveRejects closes a source after that many rejected frames
	// in a row. A rejected frame costs only its own source's goroutine, but
	// a producer stuck in a loop would otherwise spin forever.
	MaxConsecutiveRejects = 32
)
