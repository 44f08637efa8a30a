package trace

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxSourceLineFileBytes bounds how much of a file is scanned for the text
// of an offending line: a syntax error in a file bigger than this keeps its
// line number but not its text.
const maxSourceLineFileBytes = 8 << 20

// syntaxArrow is what Node prepends to a CommonJS parse error's stack:
//
//	/ws/app.js:3
//	let b = = 2;
//	        ^
//
//	SyntaxError: Unexpected token '='
//	    at wrapSafe (node:internal/…)
//
// V8 reports such an error with no user frame and with the position of
// Node's loader, so this text is the only place that names the file; the
// caret gives the column. ES modules are reported with the file and line
// in exceptionDetails instead (see decodeException).
type syntaxArrow struct {
	loc     Location
	source  string // the offending line as Node printed it
	message string // "SyntaxError: …"
}

// parseSyntaxArrow reads the arrow block from an exception description. It
// accepts only the exact shape above, a user file (mapFile) and a message
// line that starts with the error's class name, so a value that merely
// contains "path:N" is not taken for a location.
func parseSyntaxArrow(description, className string) (syntaxArrow, bool) {
	lines := strings.SplitN(description, "\n", 6)
	if len(lines) < 4 {
		return syntaxArrow{}, false
	}
	i := strings.LastIndexByte(lines[0], ':')
	if i <= 0 {
		return syntaxArrow{}, false
	}
	path := mapFile(lines[0][:i])
	line, err := strconv.Atoi(lines[0][i+1:])
	if path == "" || err != nil || line <= 0 {
		return syntaxArrow{}, false
	}
	a := syntaxArrow{loc: Location{File: path, Line: line}}
	a.source, _ = capText(strings.TrimRight(lines[1], "\r"), maxValueChars)
	rest := lines[3:]
	if caret := strings.TrimRight(lines[2], "\r"); strings.Trim(caret, " \t^") == "" && strings.Contains(caret, "^") {
		// Node pads the caret with the line's own tabs and spaces, one per
		// character: the caret's index is the 0-based column.
		a.loc.Column = utf8.RuneCountInString(caret[:strings.IndexByte(caret, '^')]) + 1
	} else {
		rest = lines[2:] // no caret line (Node omits it when it cannot place one)
	}
	for _, l := range rest {
		if l = strings.TrimSpace(l); l != "" {
			a.message, _ = capText(l, maxValueChars)
			break
		}
	}
	if className == "" || !strings.HasPrefix(a.message, className) {
		return syntaxArrow{}, false
	}
	return a, true
}

// sourceLine returns line n (1-based) of a file inside root, capped, or ""
// when the file is outside the workspace, too big or shorter than n lines.
func sourceLine(root, path string, n int) string {
	if n <= 0 || root == "" {
		return ""
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil || !within(root, real) {
		return ""
	}
	f, err := os.Open(real)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > maxSourceLineFileBytes {
		return ""
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxSourceLineFileBytes)
	for i := 1; sc.Scan(); i++ {
		if i == n {
			s, _ := capText(strings.TrimRight(sc.Text(), "\r"), maxValueChars)
			return s
		}
	}
	return ""
}
