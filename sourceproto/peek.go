package sourceproto

import "slices"

// A runtime.result the worker refuses (over a limit, or invalid) still
// answers a command a DevTools window waits for. So that the window hears
// why at once instead of waiting out the command's deadline, Ingest reads
// which command it answers with the tolerant reader below and delivers a
// RuntimeResult with only Session, ID, Method and Rejected set
// (Source.rejectedResult). The frame is refused all the same.
//
// The reader looks only at the top level of the envelope ("type", "body")
// and of the body ("session", "id", "method"), skips every other value
// without decoding it, and gives up on anything that is not JSON syntax
// around those members. It runs once per refused frame, in one pass
// without recursion, on at most MaxFrameBytes (the carriers' read limit).

// peekResult reads the correlation of a frame that claims to be a
// runtime.result. ok is false when the frame is not one or the three
// members cannot be read.
func peekResult(frame []byte) (session string, id uint64, method RuntimeMethod, ok bool) {
	p := peeker{data: frame}
	var typ, body []byte
	var haveBody bool
	ok = p.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			var good bool
			typ, good = p.plainString()
			return good
		case "body":
			start := p.pos
			if !p.skipValue() {
				return false
			}
			body, haveBody = frame[start:p.pos], true
			return true
		}
		return p.skipValue()
	})
	if !ok || !haveBody || frameTypeOf(typ) != FrameRuntimeResult {
		return "", 0, "", false
	}
	return peekResultBody(body)
}

// peekResultBody reads session, id and method from a runtime.result body.
func peekResultBody(body []byte) (session string, id uint64, method RuntimeMethod, ok bool) {
	p := peeker{data: body}
	var s, m []byte
	var haveID bool
	ok = p.object(func(key []byte) bool {
		var good bool
		switch string(key) {
		case "session":
			s, good = p.plainString()
		case "method":
			m, good = p.plainString()
		case "id":
			id, good = p.safeInteger()
			haveID = good
		default:
			good = p.skipValue()
		}
		return good
	})
	switch {
	case !ok || !haveID || !validID(s) || !slices.Contains(runtimeMethods, RuntimeMethod(m)):
		return "", 0, "", false
	}
	return string(s), id, RuntimeMethod(m), true
}

// peeker walks JSON text without building anything.
type peeker struct {
	data []byte
	pos  int
}

func (p *peeker) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *peeker) next(c byte) bool {
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// object walks one object's members, calling member with each key (raw
// bytes, escapes not decoded: a key with an escape matches none of ours)
// once the position is at its value; member must consume the value.
func (p *peeker) object(member func(key []byte) bool) bool {
	if !p.next('{') {
		return false
	}
	if p.next('}') {
		return true
	}
	for {
		p.ws()
		key, ok := p.rawString()
		if !ok || !p.next(':') {
			return false
		}
		p.ws()
		if !member(key) {
			return false
		}
		if p.next('}') {
			return true
		}
		if !p.next(',') {
			return false
		}
	}
}

// rawString reads a string at the position and returns its raw contents.
func (p *peeker) rawString() ([]byte, bool) {
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return nil, false
	}
	start := p.pos + 1
	for i := start; i < len(p.data); i++ {
		switch p.data[i] {
		case '\\':
			i++ // the escaped byte cannot end the string
		case '"':
			p.pos = i + 1
			return p.data[start:i], true
		}
	}
	return nil, false
}

// plainString reads a string without escapes (ids and method names have
// none).
func (p *peeker) plainString() ([]byte, bool) {
	s, ok := p.rawString()
	if !ok || slices.Contains(s, '\\') {
		return nil, false
	}
	return s, true
}

// safeInteger reads a canonical non-negative integer up to MaxSafeInteger.
func (p *peeker) safeInteger() (uint64, bool) {
	start := p.pos
	var n uint64
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		n = n*10 + uint64(p.data[p.pos]-'0')
		p.pos++
		if n > MaxSafeInteger {
			return 0, false
		}
	}
	digits := p.pos - start
	if digits == 0 || (digits > 1 && p.data[start] == '0') {
		return 0, false
	}
	return n, true
}

// skipValue moves past one value of any kind: strings by their quotes,
// objects and arrays by counting brackets (no recursion), scalars up to the
// next delimiter. It checks no more syntax than it needs to find the end.
func (p *peeker) skipValue() bool {
	p.ws()
	depth := 0
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; c {
		case '"':
			if _, ok := p.rawString(); !ok {
				return false
			}
		case '{', '[':
			depth++
			p.pos++
		case '}', ']':
			if depth == 0 {
				return false // the enclosing object's end: no value here
			}
			depth--
			p.pos++
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return false
			}
			p.pos++
		default:
			p.pos++
			for p.pos < len(p.data) && !isDelimiter(p.data[p.pos]) {
				p.pos++
			}
		}
		if depth == 0 {
			return true
		}
	}
	return false
}

func isDelimiter(c byte) bool {
	switch c {
	case ',', ':', '{', '}', '[', ']', '"', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
