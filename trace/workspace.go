package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// resolveRoot turns the configured workspace into an absolute, symlink-free
// directory: containment is decided on real paths only, so the root must be
// one too.
func resolveRoot(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("%w: current directory: %v", ErrWorkspace, err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrWorkspace, dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrWorkspace, dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrWorkspace, dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %q is not a directory", ErrWorkspace, dir)
	}
	return real, nil
}

// within reports whether p is root or below it. Both must be clean absolute
// paths.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// containedPath resolves p (relative to root unless absolute) to its real
// path and refuses it unless that lies inside root. Every symlink on the way
// is followed, so a link that points out of the workspace is refused even
// when the link itself sits inside. The caller passes the RESOLVED path to
// node, so a link swapped after this check cannot redirect the start.
func containedPath(root, p, what string, wantDir bool) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%w: %s contains a NUL byte", ErrBadRequest, what)
	}
	lexical := p
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(root, lexical)
	}
	lexical = filepath.Clean(lexical)
	real, err := filepath.EvalSymlinks(lexical)
	if err != nil {
		if !within(root, lexical) {
			return "", fmt.Errorf("%w: %s %q is outside %s", ErrOutsideWorkspace, what, p, root)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: %s %q does not exist in the workspace", ErrBadRequest, what, p)
		}
		return "", fmt.Errorf("%w: %s %q: %v", ErrBadRequest, what, p, err)
	}
	if !within(root, real) {
		return "", fmt.Errorf("%w: %s %q resolves to %s, outside %s", ErrOutsideWorkspace, what, p, real, root)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%w: %s %q: %v", ErrBadRequest, what, p, err)
	}
	switch {
	case wantDir && !fi.IsDir():
		return "", fmt.Errorf("%w: %s %q is not a directory", ErrBadRequest, what, p)
	case !wantDir && !fi.Mode().IsRegular():
		return "", fmt.Errorf("%w: %s %q is not a regular file", ErrBadRequest, what, p)
	}
	return real, nil
}
