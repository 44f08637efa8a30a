package sourceproto

import "strconv"

// Frame-level rules: lifecycle, Runtime unions, script reads, queries,
// fetch events.

func (h *Hello) validate() *RejectError {
	if h.Role == "" {
		return malformed("hello without role")
	}
	if h.AckDelayMs < 0 || h.AckDelayMs > MaxAckDelayMs {
		return malformed("ackDelayMs outside 0…" + strconv.Itoa(MaxAckDelayMs))
	}
	return nil
}

func (*Welcome) validate() *RejectError { return nil }

func (r *Replace) validate() *RejectError {
	if r.Reason == "" {
		return malformed("replace without reason")
	}
	return validateItems(r.Items)
}

func (a *Append) validate() *RejectError {
	if len(a.Items) == 0 {
		return malformed("append without items")
	}
	if err := checkSafe(a.Dropped, "dropped"); err != nil {
		return err
	}
	return validateItems(a.Items)
}

func (a *Ack) validate() *RejectError { return checkSafe(a.Dropped, "dropped") }

func (s *SnapshotRequest) validate() *RejectError {
	return first(checkSafe(s.Expected, "expected"), checkSafe(s.Received, "received"), checkSafe(s.Missing, "missing"))
}

func (r *Reject) validate() *RejectError {
	if r.Code == "" {
		return malformed("reject without code")
	}
	return checkSafe(r.RefSeq, "refSeq")
}

func (c *Close) validate() *RejectError {
	if c.Code == "" {
		return malformed("close without code")
	}
	return nil
}

// Runtime.

func checkCorrelation(session string, id uint64, m RuntimeMethod) *RejectError {
	if m == "" {
		return malformed("missing method")
	}
	return first(checkID(session, "session"), checkSafe(id, "id"))
}

func (c *RuntimeCommand) validate() *RejectError {
	if err := checkCorrelation(c.Session, c.ID, c.Method); err != nil {
		return err
	}
	if c.commandMember() != c.Method || c.commandCount() != 1 {
		return malformed("command union must hold exactly the member method names")
	}
	if m, p, _ := c.domCommand(); p != nil {
		return p.validateDOM(m)
	}
	switch c.Method {
	case MethodEvaluate:
		return first(checkOptID(c.Evaluate.ObjectGroup, "objectGroup"), checkNonNeg(c.Evaluate.Timeout, "timeout"))
	case MethodGetProperties:
		return checkID(c.GetProperties.Handle, "handle")
	case MethodCallFunctionOn:
		return c.CallFunctionOn.validate()
	case MethodAwaitPromise:
		return checkID(c.AwaitPromise.Handle, "handle")
	case MethodReleaseObject:
		return checkID(c.ReleaseObject.Handle, "handle")
	case MethodReleaseObjectGroup:
		return checkID(c.ReleaseObjectGroup.ObjectGroup, "objectGroup")
	}
	return nil
}

// commandMember returns the method of the first set member.
func (c *RuntimeCommand) commandMember() RuntimeMethod {
	switch {
	case c.Evaluate != nil:
		return MethodEvaluate
	case c.GetProperties != nil:
		return MethodGetProperties
	case c.CallFunctionOn != nil:
		return MethodCallFunctionOn
	case c.AwaitPromise != nil:
		return MethodAwaitPromise
	case c.ReleaseObject != nil:
		return MethodReleaseObject
	case c.ReleaseObjectGroup != nil:
		return MethodReleaseObjectGroup
	case c.GlobalLexicalScopeNames != nil:
		return MethodGlobalLexicalScopeNames
	}
	m, _, _ := c.domCommand()
	return m
}

func (c *RuntimeCommand) commandCount() int {
	_, _, dom := c.domCommand()
	return dom + count(c.Evaluate != nil, c.GetProperties != nil, c.CallFunctionOn != nil, c.AwaitPromise != nil,
		c.ReleaseObject != nil, c.ReleaseObjectGroup != nil, c.GlobalLexicalScopeNames != nil)
}

func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func (p *CallFunctionOnParams) validate() *RejectError {
	if p.FunctionDeclaration == "" {
		return malformed("callFunctionOn without functionDeclaration")
	}
	err := first(checkOptID(p.Handle, "handle"), checkOptID(p.ObjectGroup, "objectGroup"),
		checkCount(len(p.Arguments), MaxCallArguments, "MaxCallArguments"))
	if err != nil {
		return err
	}
	for i := range p.Arguments {
		a := &p.Arguments[i]
		if count(len(a.Value) > 0, a.UnserializableValue != "", a.Handle != "") > 1 {
			return malformed("call argument sets more than one of value, unserializableValue, handle")
		}
		if a.UnserializableValue != "" && !validUnserializable(a.UnserializableValue) {
			return malformed("invalid unserializableValue")
		}
		if err := first(checkOptID(a.Handle, "handle"), checkValueBytes(a.Value)); err != nil {
			return err
		}
	}
	return nil
}

func (r *RuntimeResult) validate() *RejectError {
	if err := checkCorrelation(r.Session, r.ID, r.Method); err != nil {
		return err
	}
	_, domRes, dom := r.domResult()
	n := dom + count(r.Evaluate != nil, r.GetProperties != nil, r.CallFunctionOn != nil, r.AwaitPromise != nil,
		r.ReleaseObject != nil, r.ReleaseObjectGroup != nil, r.GlobalLexicalScopeNames != nil, r.Error != nil)
	if n != 1 || (r.Error == nil && r.resultMember() != r.Method) {
		return malformed("result union must hold exactly the member method names, or error")
	}
	switch {
	case r.Error != nil:
		return r.Error.validate()
	case domRes != nil:
		return domRes.validateDOM(r.Method)
	case r.Evaluate != nil:
		return first(r.Evaluate.Result.validate(), r.Evaluate.ExceptionDetails.validate())
	case r.CallFunctionOn != nil:
		return first(r.CallFunctionOn.Result.validate(), r.CallFunctionOn.ExceptionDetails.validate())
	case r.AwaitPromise != nil:
		return first(r.AwaitPromise.Result.validate(), r.AwaitPromise.ExceptionDetails.validate())
	case r.GetProperties != nil:
		return r.GetProperties.validate()
	case r.GlobalLexicalScopeNames != nil:
		return checkCount(len(r.GlobalLexicalScopeNames.Names), MaxScopeNames, "MaxScopeNames")
	}
	return nil
}

func (r *RuntimeResult) resultMember() RuntimeMethod {
	switch {
	case r.Evaluate != nil:
		return MethodEvaluate
	case r.GetProperties != nil:
		return MethodGetProperties
	case r.CallFunctionOn != nil:
		return MethodCallFunctionOn
	case r.AwaitPromise != nil:
		return MethodAwaitPromise
	case r.ReleaseObject != nil:
		return MethodReleaseObject
	case r.ReleaseObjectGroup != nil:
		return MethodReleaseObjectGroup
	case r.GlobalLexicalScopeNames != nil:
		return MethodGlobalLexicalScopeNames
	}
	m, _, _ := r.domResult()
	return m
}

func (g *GetPropertiesResult) validate() *RejectError {
	total := len(g.Result) + len(g.InternalProperties) + len(g.PrivateProperties)
	if err := checkCount(total, MaxProperties, "MaxProperties"); err != nil {
		return err
	}
	for i := range g.Result {
		d := &g.Result[i]
		if err := first(optObject(d.Value), optObject(d.Get), optObject(d.Set), optObject(d.Symbol)); err != nil {
			return err
		}
	}
	for i := range g.InternalProperties {
		if err := optObject(g.InternalProperties[i].Value); err != nil {
			return err
		}
	}
	for i := range g.PrivateProperties {
		p := &g.PrivateProperties[i]
		if err := first(optObject(p.Value), optObject(p.Get), optObject(p.Set)); err != nil {
			return err
		}
	}
	return g.ExceptionDetails.validate()
}

func (c *RuntimeCancel) validate() *RejectError { return checkCorrelation(c.Session, c.ID, c.Method) }
func (a *RuntimeAck) validate() *RejectError    { return checkCorrelation(a.Session, a.ID, a.Method) }

// Script reads.

func (r *ScriptRead) validate() *RejectError {
	if r.URL == "" {
		return malformed("script.read without url")
	}
	return checkSafe(r.ID, "id")
}

func (m *ScriptMeta) validate() *RejectError {
	if m.URL == "" {
		return malformed("script.meta without url")
	}
	if m.Length > MaxScriptBytes {
		return overLimit("MaxScriptBytes", MaxScriptBytes)
	}
	return first(checkSafe(m.ID, "id"), checkNonNeg(m.Length, "length"))
}

func (c *ScriptChunk) validate() *RejectError {
	if err := first(checkSafe(c.ID, "id"), checkNonNeg(c.Offset, "offset"),
		checkCount(len(c.Data), MaxChunkBytes, "MaxChunkBytes")); err != nil {
		return err
	}
	if c.Offset+int64(len(c.Data)) > MaxScriptBytes {
		return overLimit("MaxScriptBytes", MaxScriptBytes)
	}
	return nil
}

func (e *ScriptEnd) validate() *RejectError {
	if e.Length > MaxScriptBytes {
		return overLimit("MaxScriptBytes", MaxScriptBytes)
	}
	return first(checkSafe(e.ID, "id"), checkNonNeg(e.Length, "length"), e.Error.validate())
}

// Queries.

func (q *QueryRequest) validate() *RejectError {
	return first(checkOptID(q.Session, "session"), checkSafe(q.ID, "id"), checkID(q.Name, "query name"),
		checkValueBytes(q.Params))
}

func (q *QueryResult) validate() *RejectError {
	if q.Error != nil && len(q.Result) > 0 {
		return malformed("query result holds both result and error")
	}
	return first(checkOptID(q.Session, "session"), checkSafe(q.ID, "id"), checkID(q.Name, "query name"),
		checkValueBytes(q.Result), q.Error.validate())
}

// Fetch.

func (f *FetchEvent) validate() *RejectError {
	if err := first(checkID(f.ID, "fetch id"), checkTimestamp(f.Timestamp)); err != nil {
		return err
	}
	n := count(f.Request != nil, f.Response != nil, f.Body != nil, f.Finished != nil, f.Failed != nil)
	var ok bool
	switch f.Phase {
	case PhaseRequest:
		ok = f.Request != nil
	case PhaseResponse:
		ok = f.Response != nil
	case PhaseBody:
		ok = f.Body != nil
	case PhaseFinished:
		ok = f.Finished != nil
	case PhaseFailed:
		ok = f.Failed != nil
	}
	if n != 1 || !ok {
		return malformed("fetch event must hold exactly the member its phase names")
	}
	switch {
	case f.Request != nil:
		if f.Request.URL == "" || f.Request.Method == "" {
			return malformed("fetch request without url or method")
		}
		return first(checkCount(len(f.Request.Headers), MaxHeaders, "MaxHeaders"), f.Request.StackTrace.validate())
	case f.Response != nil:
		if f.Response.Status < 0 || f.Response.Status > 999 {
			return malformed("fetch status outside 0..999")
		}
		return checkCount(len(f.Response.Headers), MaxHeaders, "MaxHeaders")
	case f.Body != nil:
		return first(checkNonNeg(f.Body.Offset, "offset"), checkCount(len(f.Body.Data), MaxChunkBytes, "MaxChunkBytes"))
	case f.Finished != nil:
		return first(checkNonNeg(f.Finished.RequestBytes, "requestBytes"), checkNonNeg(f.Finished.ResponseBytes, "responseBytes"))
	}
	return nil
}
