package sourceproto

// Runtime family: closed command and result unions. Every frame carries
// the DevTools session, the worker's request id and the method; the
// source id and generation are in the envelope. A union has exactly one
// member set and it is the one Method names (checked by validate).

// RuntimeCommand asks the producer's realm to run one Runtime method.
//
//easyjson:json
type RuntimeCommand struct {
	Session string        `json:"session"`
	ID      uint64        `json:"id"`
	Method  RuntimeMethod `json:"method"`

	Evaluate                *EvaluateParams                `json:"evaluate,omitempty"`
	GetProperties           *GetPropertiesParams           `json:"getProperties,omitempty"`
	CallFunctionOn          *CallFunctionOnParams          `json:"callFunctionOn,omitempty"`
	AwaitPromise            *AwaitPromiseParams            `json:"awaitPromise,omitempty"`
	ReleaseObject           *ReleaseObjectParams           `json:"releaseObject,omitempty"`
	ReleaseObjectGroup      *ReleaseObjectGroupParams      `json:"releaseObjectGroup,omitempty"`
	GlobalLexicalScopeNames *GlobalLexicalScopeNamesParams `json:"globalLexicalScopeNames,omitempty"`

	// The DOM agent (dom.go).
	DOMChildren  *DOMParams `json:"domChildren,omitempty"`
	DOMDescribe  *DOMParams `json:"domDescribe,omitempty"`
	DOMPush      *DOMParams `json:"domPush,omitempty"`
	DOMResolve   *DOMParams `json:"domResolve,omitempty"`
	DOMOuterHTML *DOMParams `json:"domOuterHTML,omitempty"`
	DOMEdit      *DOMParams `json:"domEdit,omitempty"`
	DOMDisable   *DOMParams `json:"domDisable,omitempty"`
	DOMSearch    *DOMParams `json:"domSearch,omitempty"`
	DOMResults   *DOMParams `json:"domResults,omitempty"`
	DOMBox       *DOMParams `json:"domBox,omitempty"`
	DOMOverlay   *DOMParams `json:"domOverlay,omitempty"`
	DOMCSS       *DOMParams `json:"domCSS,omitempty"`
	DOMListeners *DOMParams `json:"domListeners,omitempty"`
	DOMPlace     *DOMParams `json:"domPlace,omitempty"`
	DOMLocate    *DOMParams `json:"domLocate,omitempty"`
	DOMClasses   *DOMParams `json:"domClasses,omitempty"`
}

// EvaluateParams mirrors CDP Runtime.evaluate's client subset. Timeout
// is milliseconds; 0 means the worker's own deadline only.
//
//easyjson:json
type EvaluateParams struct {
	Expression            string `json:"expression"`
	ObjectGroup           string `json:"objectGroup,omitempty"`
	IncludeCommandLineAPI bool   `json:"includeCommandLineAPI,omitempty"`
	Silent                bool   `json:"silent,omitempty"`
	ReturnByValue         bool   `json:"returnByValue,omitempty"`
	GeneratePreview       bool   `json:"generatePreview,omitempty"`
	UserGesture           bool   `json:"userGesture,omitempty"`
	AwaitPromise          bool   `json:"awaitPromise,omitempty"`
	ThrowOnSideEffect     bool   `json:"throwOnSideEffect,omitempty"`
	ReplMode              bool   `json:"replMode,omitempty"`
	Timeout               int64  `json:"timeout,omitempty"`
}

// GetPropertiesParams mirrors CDP Runtime.getProperties.
//
//easyjson:json
type GetPropertiesParams struct {
	Handle                   string `json:"handle"`
	OwnProperties            bool   `json:"ownProperties,omitempty"`
	AccessorPropertiesOnly   bool   `json:"accessorPropertiesOnly,omitempty"`
	GeneratePreview          bool   `json:"generatePreview,omitempty"`
	NonIndexedPropertiesOnly bool   `json:"nonIndexedPropertiesOnly,omitempty"`
}

// CallFunctionOnParams mirrors CDP Runtime.callFunctionOn. Handle is the
// receiver; empty means the realm's global object.
//
//easyjson:json
type CallFunctionOnParams struct {
	FunctionDeclaration string         `json:"functionDeclaration"`
	Handle              string         `json:"handle,omitempty"`
	Arguments           []CallArgument `json:"arguments,omitempty"`
	Silent              bool           `json:"silent,omitempty"`
	ReturnByValue       bool           `json:"returnByValue,omitempty"`
	GeneratePreview     bool           `json:"generatePreview,omitempty"`
	UserGesture         bool           `json:"userGesture,omitempty"`
	AwaitPromise        bool           `json:"awaitPromise,omitempty"`
	ObjectGroup         string         `json:"objectGroup,omitempty"`
	ThrowOnSideEffect   bool           `json:"throwOnSideEffect,omitempty"`
}

// AwaitPromiseParams mirrors CDP Runtime.awaitPromise.
//
//easyjson:json
type AwaitPromiseParams struct {
	Handle          string `json:"handle"`
	ReturnByValue   bool   `json:"returnByValue,omitempty"`
	GeneratePreview bool   `json:"generatePreview,omitempty"`
}

// ReleaseObjectParams mirrors CDP Runtime.releaseObject.
//
//easyjson:json
type ReleaseObjectParams struct {
	Handle string `json:"handle"`
}

// ReleaseObjectGroupParams mirrors CDP Runtime.releaseObjectGroup.
//
//easyjson:json
type ReleaseObjectGroupParams struct {
	ObjectGroup string `json:"objectGroup"`
}

// GlobalLexicalScopeNamesParams has no members: the source generation is
// the execution context.
//
//easyjson:json
type GlobalLexicalScopeNamesParams struct{}

// RuntimeResult answers a RuntimeCommand: Session, ID and Method repeat
// the command's, and exactly one member is set: the one Method names, or
// Error for a transport failure. Handles in a result are provisional until
// the worker's runtime.ack.
//
//easyjson:json
type RuntimeResult struct {
	Session string        `json:"session"`
	ID      uint64        `json:"id"`
	Method  RuntimeMethod `json:"method"`

	Evaluate                *EvaluateResult                `json:"evaluate,omitempty"`
	GetProperties           *GetPropertiesResult           `json:"getProperties,omitempty"`
	CallFunctionOn          *CallFunctionOnResult          `json:"callFunctionOn,omitempty"`
	AwaitPromise            *AwaitPromiseResult            `json:"awaitPromise,omitempty"`
	ReleaseObject           *ReleaseObjectResult           `json:"releaseObject,omitempty"`
	ReleaseObjectGroup      *ReleaseObjectGroupResult      `json:"releaseObjectGroup,omitempty"`
	GlobalLexicalScopeNames *GlobalLexicalScopeNamesResult `json:"globalLexicalScopeNames,omitempty"`
	DOMChildren             *DOMResult                     `json:"domChildren,omitempty"`
	DOMDescribe             *DOMResult                     `json:"domDescribe,omitempty"`
	DOMPush                 *DOMResult                     `json:"domPush,omitempty"`
	DOMResolve              *DOMResult                     `json:"domResolve,omitempty"`
	DOMOuterHTML            *DOMResult                     `json:"domOuterHTML,omitempty"`
	DOMEdit                 *DOMResult                     `json:"domEdit,omitempty"`
	DOMDisable              *DOMResult                     `json:"domDisable,omitempty"`
	DOMSearch               *DOMResult                     `json:"domSearch,omitempty"`
	DOMResults              *DOMResult                     `json:"domResults,omitempty"`
	DOMBox                  *DOMResult                     `json:"domBox,omitempty"`
	DOMOverlay              *DOMResult                     `json:"domOverlay,omitempty"`
	DOMCSS                  *DOMResult                     `json:"domCSS,omitempty"`
	DOMListeners            *DOMResult                     `json:"domListeners,omitempty"`
	DOMPlace                *DOMResult                     `json:"domPlace,omitempty"`
	DOMLocate               *DOMResult                     `json:"domLocate,omitempty"`
	DOMClasses              *DOMResult                     `json:"domClasses,omitempty"`
	Error                   *TransportError                `json:"error,omitempty"`

	// Rejected is never on the wire. Ingest sets it, with Session, ID and
	// Method and nothing else, on a runtime.result it refused (over a
	// limit, or invalid) whose correlation it could still read: the
	// consumer answers that command at once, with why, instead of letting
	// it wait for its deadline; the producer gets the reject as usual.
	Rejected *RejectError `json:"-"`
}

// EvaluateResult: a thrown exception is a success with ExceptionDetails.
//
//easyjson:json
type EvaluateResult struct {
	Result           RemoteObject      `json:"result"`
	ExceptionDetails *ExceptionDetails `json:"exceptionDetails,omitempty"`
}

// GetPropertiesResult mirrors CDP's.
//
//easyjson:json
type GetPropertiesResult struct {
	Result             []PropertyDescriptor         `json:"result"`
	InternalProperties []InternalPropertyDescriptor `json:"internalProperties,omitempty"`
	PrivateProperties  []PrivatePropertyDescriptor  `json:"privateProperties,omitempty"`
	ExceptionDetails   *ExceptionDetails            `json:"exceptionDetails,omitempty"`
}

// CallFunctionOnResult mirrors CDP's.
//
//easyjson:json
type CallFunctionOnResult struct {
	Result           RemoteObject      `json:"result"`
	ExceptionDetails *ExceptionDetails `json:"exceptionDetails,omitempty"`
}

// AwaitPromiseResult mirrors CDP's.
//
//easyjson:json
type AwaitPromiseResult struct {
	Result           RemoteObject      `json:"result"`
	ExceptionDetails *ExceptionDetails `json:"exceptionDetails,omitempty"`
}

// ReleaseObjectResult is empty: success is the answer.
//
//easyjson:json
type ReleaseObjectResult struct{}

// ReleaseObjectGroupResult is empty: success is the answer.
//
//easyjson:json
type ReleaseObjectGroupResult struct{}

// GlobalLexicalScopeNamesResult mirrors CDP's.
//
//easyjson:json
type GlobalLexicalScopeNamesResult struct {
	Names []string `json:"names"`
}

// RuntimeCancel withdraws a command (worker deadline, DevTools closed).
// The producer answers with an Error result of code "cancelled" unless
// the result was already sent.
//
//easyjson:json
type RuntimeCancel struct {
	Session string        `json:"session"`
	ID      uint64        `json:"id"`
	Method  RuntimeMethod `json:"method"`
}

// RuntimeAck acknowledges a result. Accepted: the worker mapped the
// result's handles into its object table and will release them with
// releaseObject/releaseObjectGroup. Not accepted (late, cancelled, or the
// DevTools session is gone): the producer frees them now.
//
//easyjson:json
type RuntimeAck struct {
	Session  string        `json:"session"`
	ID       uint64        `json:"id"`
	Method   RuntimeMethod `json:"method"`
	Accepted bool          `json:"accepted"`
}
