package hostnode

import (
	"strings"
	"sync"
)

// Node's inspector prints banner lines on the child's stderr. They are not
// the program's output, and they name Node's private inspector URL, which a
// user must not connect to (the worker is the endpoint). The program can
// print the same text, so a line is Node's only where Node prints it, never
// by its text alone:
//
//   - the start banner: the first lines of stderr, in this order (a prefix
//     of them is enough). Node prints them before any code of the program
//     runs; with --inspect-brk or --inspect-wait the program starts only
//     after the first attach, whose "Debugger attached." is the third line.
//   - an attach: "Debugger attached." once per session opened to this
//     process's inspector through Dial (Node prints it for every session,
//     at any point of the stream). Dial announces the session before it
//     connects; the next such line after the announcement is Node's.
//   - the end banner: the LAST lines of stderr, in this order (a prefix is
//     enough). Node prints "Waiting …" once the program ended while a
//     session is attached, the rest when the last session goes. A line that
//     matches is held back until the next line shows it was not the end
//     (then it is the program's) or the stream ends (then it was Node's).
//   - a detach: "Debugger ending on <this process's URL>" directly followed
//     by the help line, anywhere: Node prints both in one write when the
//     last session goes while the program still runs. The URL holds a
//     random UUID that the program cannot print by accident.
//
// Everything else passes, whatever it looks like.
var (
	startBanners = []func(string) bool{
		func(l string) bool { return strings.HasPrefix(l, listeningPrefix+"ws://") },
		func(l string) bool { return l == inspectorHelp },
		func(l string) bool { return l == debuggerAttached },
	}
	endBanners = []func(string) bool{
		func(l string) bool { return l == waitingDisconnect },
		func(l string) bool { return strings.HasPrefix(l, endingPrefix) },
		func(l string) bool { return l == inspectorHelp },
	}
)

const (
	inspectorHelp    = "For help, see: https://nodejs.org/en/docs/inspector"
	debuggerAttached = "Debugger attached."
	endingPrefix     = "Debugger ending on ws://"
)

// Banner recognises Node's inspector banner lines in the stderr of ONE node
// process, by position (see startBanners). Feed it every complete line in
// order with the caller's item for it (its bytes, an event); Line returns
// the items to emit now, holding back possible end banners. Call End once
// the stream ended. Safe for concurrent use: Dial announces attaches from
// other goroutines. The zero value is ready to use.
type Banner[T any] struct {
	mu           sync.Mutex // Lock order: see docs/locks.md.
	lines        int        // Guarded by mu: complete lines seen so far.
	startDropped int        // Guarded by mu: leading lines dropped as the start banner.
	held         []T        // Guarded by mu: a run of lines that may be Node's end banner or detach.
	heldText     []string   // Guarded by mu: the texts of held.
	runStart     int        // Guarded by mu: the index in endBanners of held's first line.
	url          string     // Guarded by mu: the inspector URL of the start banner, while registered.
	attaches     int        // Guarded by mu: sessions announced by Dial whose "Debugger attached." is still to come.
}

// Line takes the next complete line's text (without its "\n"; a trailing
// "\r" is ignored) and the caller's item for it, and returns the items to
// emit now, in order: held lines that turned out to be the program's, then
// this one unless it is (or may be) Node's.
func (b *Banner[T]) Line(text string, item T) []T {
	text = strings.TrimSuffix(text, "\r")
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines++
	if b.lines <= len(startBanners) && b.lines-1 == b.startDropped && startBanners[b.lines-1](text) {
		b.startDropped++
		switch b.lines {
		case 1:
			b.watchAttachesLocked(text)
		case len(startBanners): // the first attach, announced by its Dial (if it was ours)
			b.attaches = max(0, b.attaches-1)
		}
		return nil
	}
	if text == debuggerAttached && b.attaches > 0 {
		// Node's line for a session we opened; held lines stay held: Node
		// may print it after "Waiting …" when a window attaches late.
		b.attaches--
		return nil
	}
	if next := b.runStart + len(b.held); len(b.held) > 0 && next < len(endBanners) && endBanners[next](text) {
		b.holdLocked(text, item)
		return nil
	}
	emit := b.held
	b.held, b.heldText = nil, b.heldText[:0]
	switch { // could start a run afresh
	case endBanners[0](text):
		b.runStart = 0
	case b.url != "" && text == "Debugger ending on "+b.url:
		b.runStart = 1
	default:
		return append(emit, item)
	}
	b.holdLocked(text, item)
	return emit
}

// holdLocked holds a line of the run; a completed detach (this process's
// ending line and the help line) is Node's at once and is dropped.
func (b *Banner[T]) holdLocked(text string, item T) {
	b.held, b.heldText = append(b.held, item), append(b.heldText, text)
	n := len(b.heldText)
	if n >= 2 && b.url != "" && b.heldText[n-2] == "Debugger ending on "+b.url && text == inspectorHelp {
		b.held, b.heldText = b.held[:n-2], b.heldText[:n-2]
	}
}

// passLine counts a line that cannot be a banner (longer than any) as the
// program's, and returns the held items to emit before it.
func (b *Banner[T]) passLine() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines++
	emit := b.held
	b.held, b.heldText = nil, b.heldText[:0]
	return emit
}

// End marks the end of the stream: the held lines were Node's end banner,
// drop them. After End, the next Line starts a new stream (a new process).
func (b *Banner[T]) End() {
	b.mu.Lock()
	url := b.url
	b.lines, b.startDropped, b.held, b.heldText, b.runStart, b.url, b.attaches = 0, 0, nil, nil, 0, "", 0
	b.mu.Unlock()
	if url != "" {
		attachWatchers.remove(url, b)
	}
}

// watchAttachesLocked registers b for the attaches Dial announces to the
// URL of listening (Node's first line). The registration precedes every
// Dial to that URL: Start copies each stderr line to its writer before it
// parses the URL out of it, and the URL is known only after that.
func (b *Banner[T]) watchAttachesLocked(listening string) {
	url, _, _ := strings.Cut(strings.TrimPrefix(listening, listeningPrefix), " ")
	if url == b.url {
		return
	}
	if b.url != "" {
		attachWatchers.remove(b.url, b)
	}
	b.url = url
	attachWatchers.add(url, b)
}

// expectAttach is Dial's announcement: a session to url is being opened.
// undo withdraws it when the dial failed.
func (b *Banner[T]) expectAttach() (undo func()) {
	b.mu.Lock()
	b.attaches++
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		b.attaches = max(0, b.attaches-1)
		b.mu.Unlock()
	}
}

// attachWatcher is a Banner of any item type.
type attachWatcher interface{ expectAttach() (undo func()) }

// attachWatchers maps an inspector URL to the Banners reading that node's
// stderr. Lock order: a Banner's mu, then bannerRegistry.mu (a Banner
// registers while it reads its first line); never the reverse: announceAttach
// collects under bannerRegistry.mu, unlocks, then takes each Banner's mu.
var attachWatchers = &bannerRegistry{m: map[string][]attachWatcher{}}

type bannerRegistry struct {
	mu sync.Mutex                 // Lock order: see docs/locks.md.
	m  map[string][]attachWatcher // Guarded by mu.
}

func (r *bannerRegistry) add(url string, b attachWatcher) {
	r.mu.Lock()
	r.m[url] = append(r.m[url], b)
	r.mu.Unlock()
}

func (r *bannerRegistry) remove(url string, b attachWatcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.m[url]
	for i, x := range list {
		if x == b {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(r.m, url)
	} else {
		r.m[url] = list
	}
}

// announceAttach tells every Banner of url that a session is being opened,
// and returns the function that withdraws it.
func (r *bannerRegistry) announceAttach(url string) (undo func()) {
	r.mu.Lock()
	list := append([]attachWatcher(nil), r.m[url]...)
	r.mu.Unlock()
	undos := make([]func(), 0, len(list))
	for _, b := range list {
		undos = append(undos, b.expectAttach())
	}
	return func() {
		for _, u := range undos {
			u()
		}
	}
}
