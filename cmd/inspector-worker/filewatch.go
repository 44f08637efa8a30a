package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// fileWatcher watches directory trees for `run --watch` (fsnotify: inotify
// on Linux, which is per directory, so every directory is added and new ones
// are added as they appear). It reports that something changed, with the
// latest path, through a one-slot signal: however many events arrive while
// the supervisor is busy restarting, they are one pending change (the
// bounded-queue policy: coalesce, keep the latest name and the count).
//
// Goroutines: loop, until Close.
type fileWatcher struct {
	w       *fsnotify.Watcher // Static after construction.
	changed chan struct{}     // cap 1
	errs    func(error)       // Static after construction.
	exts    map[string]bool   // Static after construction: extensions that count; nil = all.

	// Lock order: see docs/locks.md.
	mu     sync.Mutex
	latest string // Guarded by mu: the last changed path since take.
	count  int    // Guarded by mu: changes since take.
	done   chan struct{}
}

// ignoredDir reports directories never watched: dependencies, VCS data and
// dot-directories (editor and tool state), whose churn is not the app's code.
func ignoredDir(name string) bool {
	return name == "node_modules" || (strings.HasPrefix(name, ".") && name != "." && name != "..")
}

// ignoredFile reports files whose changes are editor noise: dot-files (vim's
// .app.js.swp), backups (app.js~) and vim's write probe "4913".
func ignoredFile(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") || name == "4913" ||
		strings.HasSuffix(name, ".swp") || strings.HasSuffix(name, ".swx")
}

// defaultWatchExts are the files that count when the script's directory is
// watched by default (as nodemon's defaults, plus TypeScript): a log file the
// app (or a shell redirect) writes beside it would otherwise restart the
// host forever. --watch-path counts every file.
var defaultWatchExts = []string{".js", ".mjs", ".cjs", ".json", ".ts", ".mts", ".cts", ".jsx", ".tsx"}

// newFileWatcher watches paths; exts, if not nil, lists the file extensions
// whose changes count.
func newFileWatcher(paths, exts []string, errs func(error)) (*fileWatcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("cannot watch files: %w", err)
	}
	fw := &fileWatcher{w: w, changed: make(chan struct{}, 1), errs: errs, done: make(chan struct{})}
	if exts != nil {
		fw.exts = map[string]bool{}
		for _, e := range exts {
			fw.exts[e] = true
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("--watch-path %s: %w", p, err)
		}
		if !st.IsDir() {
			// A single file: watch its directory (editors replace files by
			// rename, which a watch on the file itself would lose) and let
			// only that name through.
			if err := w.Add(filepath.Dir(p)); err != nil {
				w.Close()
				return nil, fmt.Errorf("cannot watch %s: %w", p, err)
			}
			continue
		}
		if err := fw.addTree(p); err != nil {
			w.Close()
			return nil, err
		}
	}
	go fw.loop(paths)
	return fw, nil
}

// addTree watches dir and every directory below it that is not ignored.
func (fw *fileWatcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // a directory that vanished or is unreadable: skip it
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && ignoredDir(d.Name()) {
			return filepath.SkipDir
		}
		if err := fw.w.Add(p); err != nil {
			return fmt.Errorf("cannot watch %s: %w (raise fs.inotify.max_user_watches, or narrow it with --watch-path)", p, err)
		}
		return nil
	})
}

func (fw *fileWatcher) loop(roots []string) {
	defer close(fw.done)
	files := map[string]bool{} // roots that are files: only these names count in their directory
	dirs := map[string]bool{}
	for _, r := range roots {
		if st, err := os.Stat(r); err == nil && !st.IsDir() {
			files[filepath.Clean(r)] = true
		} else {
			dirs[filepath.Clean(r)] = true
		}
	}
	for {
		select {
		case ev, ok := <-fw.w.Events:
			if !ok {
				return
			}
			fw.event(ev, files, dirs)
		case err, ok := <-fw.w.Errors:
			if !ok {
				return
			}
			if fw.errs != nil {
				fw.errs(err)
			}
		}
	}
}

func (fw *fileWatcher) event(ev fsnotify.Event, files, dirs map[string]bool) {
	if ev.Op == fsnotify.Chmod {
		return // touch/chmod: no content change
	}
	name := filepath.Clean(ev.Name)
	if len(files) > 0 && !files[name] && !underAny(name, dirs) {
		return
	}
	base := filepath.Base(name)
	if ev.Has(fsnotify.Create) {
		if st, err := os.Stat(name); err == nil && st.IsDir() {
			if !ignoredDir(base) {
				_ = fw.addTree(name)
			}
			return
		}
	}
	if ignoredFile(base) || (fw.exts != nil && !fw.exts[filepath.Ext(base)]) {
		return
	}
	fw.mu.Lock()
	fw.latest = name
	fw.count++
	fw.mu.Unlock()
	select {
	case fw.changed <- struct{}{}:
	default:
	}
}

func underAny(p string, dirs map[string]bool) bool {
	for d := range dirs {
		if rel, err := filepath.Rel(d, p); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// Changed is signalled when something changed since the last take.
func (fw *fileWatcher) Changed() <-chan struct{} { return fw.changed }

// take returns the latest changed path and how many changes there were, and
// starts counting again.
func (fw *fileWatcher) take() (string, int) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	p, n := fw.latest, fw.count
	fw.latest, fw.count = "", 0
	return p, n
}

func (fw *fileWatcher) Close() {
	fw.w.Close()
	<-fw.done
}

// Debounce: a restart waits until the tree was quiet for watchQuiet (an
// editor's save is often several events; "save all" is many), but never more
// than watchMaxWait after the first change, so a tree that keeps changing
// still restarts (and says so). watchMaxWait was 1 s: a `git checkout` or a
// build writing for 1.5 s restarted the host twice, the first time on a
// half-written tree; 10 s covers such bursts while a tree that never
// settles still gets a host.
const (
	watchQuiet   = 200 * time.Millisecond
	watchMaxWait = 10 * time.Second
)
