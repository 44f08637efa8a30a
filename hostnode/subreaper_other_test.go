//go:build !linux

package hostnode

// becomeSubreaper: no subreapers outside Linux; orphans go to init, which
// reaps them.
func becomeSubreaper() error { return nil }
