package sourceproto

import "encoding/binary"

// skipValue validates one JSON value at s.pos and moves past it. depth is
// the nesting level of the enclosing container. It is iterative, with the
// open containers kept as a bit stack (1 = object), so hostile nesting
// costs no Go stack; MaxDepth (64) is exactly the stack's width.
func (s *scanner) skipValue(depth int) bool {
	var stack uint64
	level := 0
	for {
		s.ws()
		if s.pos >= len(s.data) {
			return s.syntax()
		}
		c := s.data[s.pos]
		switch {
		case c == '{' || c == '[':
			if depth+level+1 > MaxDepth {
				return s.fail(overLimit("MaxDepth", MaxDepth))
			}
			if c == '{' {
				if s.objects++; s.objects > MaxFrameObjects {
					return s.fail(overLimit("MaxFrameObjects", MaxFrameObjects))
				}
				stack |= 1 << level
			} else {
				stack &^= 1 << level
			}
			level++
			s.pos++
			s.ws()
			if s.pos < len(s.data) && s.data[s.pos] == c+2 { // '{'+2 is '}', '['+2 is ']'
				s.pos++
				level--
				break
			}
			if c == '{' {
				if _, _, ok := s.key(); !ok {
					return false
				}
			}
			continue
		case c == '"':
			if !s.str() {
				return false
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if !s.num() {
				return false
			}
		case c == 't':
			if !s.literal("true") {
				return false
			}
		case c == 'f':
			if !s.literal("false") {
				return false
			}
		case c == 'n':
			if !s.literal("null") {
				return false
			}
		default:
			return s.syntax()
		}
		// A value ended: close containers, or step to the next element.
		if done, ok := s.afterValue(&level, stack); !ok || done {
			return ok
		}
	}
}

// afterValue consumes closers and at most one comma after a value. done
// reports that the outermost value is complete.
func (s *scanner) afterValue(level *int, stack uint64) (done, ok bool) {
	for {
		if *level == 0 {
			return true, true
		}
		s.ws()
		if s.pos >= len(s.data) {
			return false, s.syntax()
		}
		c := s.data[s.pos]
		s.pos++
		isObj := stack&(1<<(*level-1)) != 0
		switch {
		case c == ',':
			if isObj {
				if _, _, ok := s.key(); !ok {
					return false, false
				}
			}
			return false, true
		case isObj && c == '}', !isObj && c == ']':
			*level--
		default:
			return false, s.syntax()
		}
	}
}

// str scans a string at s.pos (the opening quote): escapes must be valid,
// control characters are refused, and the raw length is bounded. Strings
// are most of a frame's bytes, so plain runs are skipped eight bytes at a
// time.
func (s *scanner) str() bool {
	d := s.data
	start := s.pos + 1
	i := start
	for {
		for i+8 <= len(d) && specialBytes(binary.LittleEndian.Uint64(d[i:])) == 0 {
			i += 8
		}
		if i >= len(d) {
			return s.syntax()
		}
		switch c := d[i]; {
		case c == '"':
			if i-start > MaxStringBytes {
				return s.fail(overLimit("MaxStringBytes", MaxStringBytes))
			}
			s.pos = i + 1
			return true
		case c == '\\':
			n, ok := escapeLen(d[i:])
			if !ok {
				return s.syntax()
			}
			i += n
		case c < 0x20:
			return s.fail(malformed("control character in string"))
		default:
			i++
		}
	}
}

// specialBytes is non-zero when some byte of x is '"', '\\' or below 0x20
// (bit tricks from "Bit Twiddling Hacks": haszero and hasless). It may
// flag a byte after a true hit, never miss one; str re-checks per byte.
func specialBytes(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return ((q - ones) &^ q & highs) | ((b - ones) &^ b & highs) | ((x - ones*0x20) &^ x & highs)
}

// escapeLen returns the length of the escape sequence at the start of d.
func escapeLen(d []byte) (int, bool) {
	if len(d) < 2 {
		return 0, false
	}
	switch d[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
		if len(d) < 6 || !isHex(d[2]) || !isHex(d[3]) || !isHex(d[4]) || !isHex(d[5]) {
			return 0, false
		}
		return 6, true
	}
	return 0, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// num scans a number with RFC 8259's grammar exactly (the generated
// decoders accept "01" and "1."; this pass does not).
func (s *scanner) num() bool {
	d, i := s.data, s.pos
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return s.syntax()
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return s.syntax()
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return s.syntax()
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return true
}

func (s *scanner) literal(lit string) bool {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return s.syntax()
	}
	s.pos += len(lit)
	return true
}
