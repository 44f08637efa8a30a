package sourceproto

import "unicode/utf8"

// Envelope is the strict outer object of every frame:
//
//	{"v":1,"type":"append","source":"client-7f3a","gen":4,"seq":17,"body":{…}}
//
// It is read by a hand-written scanner (not a generated decoder) because it
// must be read before anything else and must be exact: members appear at
// most once, integers are canonical and JavaScript-safe, identifiers carry
// no escapes. The same pass checks the whole frame's JSON syntax, UTF-8,
// nesting depth, object count and string sizes, so the body decoders that
// run later never see input those bounds would refuse.
type Envelope struct {
	V      int
	Type   FrameType
	Source string
	Gen    uint64
	Seq    uint64
	// Body is the raw body object. It aliases the frame passed to
	// DecodeEnvelope and is valid only as long as that buffer is.
	Body []byte
}

// Envelope member bits, for presence and duplicate checks.
const (
	hasV uint8 = 1 << iota
	hasType
	hasSource
	hasGen
	hasSeq
	hasBody
)

// rawEnvelope is the scanner's result before any allocation: typ and
// source alias the frame.
type rawEnvelope struct {
	v       uint64
	typName []byte
	typ     FrameType
	source  []byte
	gen     uint64
	seq     uint64
	body    []byte
	has     uint8
	bad     uint8 // members present with a value of the wrong form
	unknown bool  // a member outside the envelope grammar, or a duplicate
}

// DecodeEnvelope reads and checks a frame's envelope: size, syntax,
// version, member set, type, source id, and the gen/seq rules of the type.
// The body is syntax-checked but not decoded. Errors are *RejectError.
func DecodeEnvelope(frame []byte) (Envelope, error) {
	raw, rerr := scanEnvelope(frame)
	if rerr != nil {
		return Envelope{}, rerr
	}
	return Envelope{V: int(raw.v), Type: raw.typ, Source: string(raw.source),
		Gen: raw.gen, Seq: raw.seq, Body: raw.body}, nil
}

// scanEnvelope is DecodeEnvelope without allocation. Checks run in the
// order docs/protocol.md gives: size, syntax and bounds, version, members,
// type, source, generation, sequence.
func scanEnvelope(frame []byte) (rawEnvelope, *RejectError) {
	var e rawEnvelope
	if len(frame) > MaxFrameBytes {
		return e, overLimit("MaxFrameBytes", MaxFrameBytes)
	}
	if !utf8.Valid(frame) {
		return e, malformed("invalid UTF-8")
	}
	s := scanner{data: frame}
	if err := s.envelope(&e); err != nil {
		return e, err
	}
	return e, e.check()
}

func (e *rawEnvelope) check() *RejectError {
	if e.has&hasV == 0 || e.bad&hasV != 0 {
		return malformed("missing or invalid v")
	}
	if e.v != Version {
		return reject(RejectUnsupportedVersion, "this worker speaks version 1")
	}
	if e.unknown || e.bad != 0 {
		return malformed("envelope member unknown, repeated or of the wrong form")
	}
	if e.has&hasType == 0 {
		return malformed("missing type")
	}
	if e.typ = frameTypeOf(e.typName); e.typ == frameInvalid {
		return reject(RejectUnknownType, "no such frame type")
	}
	rule := frameRules[e.typ]
	switch {
	case e.has&hasSource == 0 && e.typ != FrameReject:
		return malformed("missing source")
	case e.has&hasSource != 0 && !validID(e.source):
		return malformed("source id must be 1-128 of [A-Za-z0-9._:-]")
	case rule.noGen && e.has&hasGen != 0:
		return malformed("hello carries no gen: the worker assigns it")
	case !rule.noGen && e.typ != FrameReject && (e.has&hasGen == 0 || e.gen == 0):
		return malformed("missing gen")
	case rule.sequenced != (e.has&hasSeq != 0):
		return malformed("seq present on an unsequenced type, or missing")
	case e.typ == FrameAppend && e.seq == 0:
		return malformed("append seq starts at 1")
	case e.has&hasBody == 0:
		return malformed("missing body")
	}
	return nil
}

// validID reports whether b is a protocol identifier: 1..MaxIDBytes of
// [A-Za-z0-9._:-]. Ids are echoed in logs and DevTools labels, so they are
// kept to characters that need no escaping anywhere.
func validID(b []byte) bool {
	if len(b) == 0 || len(b) > MaxIDBytes {
		return false
	}
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// scanner validates JSON syntax in one forward pass. It is not a decoder:
// it only finds where values end, and enforces the structural limits.
type scanner struct {
	data    []byte
	pos     int
	objects int
	err     *RejectError
}

func (s *scanner) fail(r *RejectError) bool {
	if s.err == nil {
		s.err = r
	}
	return false
}

func (s *scanner) syntax() bool { return s.fail(malformed("JSON syntax error")) }

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// envelope scans the top-level object, filling e.
func (s *scanner) envelope(e *rawEnvelope) *RejectError {
	s.ws()
	if s.pos >= len(s.data) || s.data[s.pos] != '{' {
		return malformed("frame is not a JSON object")
	}
	s.pos++
	s.objects++
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
	} else {
		for {
			if !s.member(e) {
				return s.err
			}
			s.ws()
			if s.pos >= len(s.data) {
				s.syntax()
				return s.err
			}
			c := s.data[s.pos]
			s.pos++
			if c == '}' {
				break
			}
			if c != ',' {
				s.syntax()
				return s.err
			}
		}
	}
	s.ws()
	if s.pos != len(s.data) {
		return malformed("data after the frame object")
	}
	return nil
}

// member scans one envelope member. Values of the wrong form and unknown
// or repeated members are recorded, not failed at once, so that a frame of
// another version is reported as such rather than as malformed.
func (s *scanner) member(e *rawEnvelope) bool {
	key, escaped, ok := s.key()
	if !ok {
		return false
	}
	var bit uint8
	if !escaped {
		switch string(key) {
		case "v":
			bit = hasV
		case "type":
			bit = hasType
		case "source":
			bit = hasSource
		case "gen":
			bit = hasGen
		case "seq":
			bit = hasSeq
		case "body":
			bit = hasBody
		}
	}
	if bit == 0 || e.has&bit != 0 {
		e.unknown = true
		return s.skipValue(1)
	}
	e.has |= bit
	s.ws()
	start := s.pos
	if !s.skipValue(1) {
		return false
	}
	val := s.data[start:s.pos]
	switch bit {
	case hasV:
		e.v, ok = canonicalUint(val)
	case hasGen:
		e.gen, ok = canonicalUint(val)
	case hasSeq:
		e.seq, ok = canonicalUint(val)
	case hasType:
		e.typName, ok = plainString(val)
	case hasSource:
		e.source, ok = plainString(val)
	case hasBody:
		e.body, ok = val, val[0] == '{'
	}
	if !ok {
		e.bad |= bit
	}
	return true
}

// key reads `"name"` and the colon after it. escaped reports a backslash in
// the name: envelope names are never escaped, so such a key is unknown.
func (s *scanner) key() (name []byte, escaped, ok bool) {
	s.ws()
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return nil, false, s.syntax()
	}
	start := s.pos
	if !s.str() {
		return nil, false, false
	}
	name = s.data[start+1 : s.pos-1]
	for _, c := range name {
		if c == '\\' {
			escaped = true
		}
	}
	s.ws()
	if s.pos >= len(s.data) || s.data[s.pos] != ':' {
		return nil, false, s.syntax()
	}
	s.pos++
	return name, escaped, true
}

// canonicalUint parses a JSON integer written as JavaScript's
// Number.prototype.toString writes it: no sign, fraction, exponent or
// leading zero, at most MaxSafeInteger.
func canonicalUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n <= MaxSafeInteger
}

// plainString returns the content of a JSON string that has no escapes.
func plainString(b []byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != '"' {
		return nil, false
	}
	in := b[1 : len(b)-1]
	for _, c := range in {
		if c == '\\' {
			return nil, false
		}
	}
	return in, true
}
