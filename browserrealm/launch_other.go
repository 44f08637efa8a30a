//go:build !unix

package browserrealm

import (
	"context"
	"errors"
)

// Launched is a started browser; --browser needs a Unix system (process
// groups for a clean stop).
type Launched struct{ Endpoint string }

// Launch says --browser is not available here; --browser-cdp is.
func Launch(context.Context, string, bool) (*Launched, error) {
	return nil, errors.New("--browser needs a Unix system; start the browser with --remote-debugging-port and give --browser-cdp")
}

func (l *Launched) Pid() int        { return 0 }
func (l *Launched) Profile() string { return "" }
func (l *Launched) Close()          {}
