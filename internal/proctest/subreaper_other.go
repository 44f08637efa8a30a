//go:build !linux

package proctest

// BecomeSubreaper does nothing outside Linux: there are no subreapers, and
// orphans go to init, which reaps them.
func BecomeSubreaper() error { return nil }
