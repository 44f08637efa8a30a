package sourceproto

import (
	"fmt"
	"runtime/debug"
)

// fanout is the Consumer of a Registry with more than one consumer (the
// client hub, the Network domain…). Each call goes to every consumer, one
// after another in registration order, on the goroutine delivering the
// source's lane (deliver.go, one at a time, in order), so every consumer
// sees each source's calls in the same order, and a consumer sees a call
// only after the consumers before it returned from it.
//
// A consumer that panics does not deprive the others: the call still
// reaches every consumer, then the first panic is raised again as a
// *ConsumerPanic, and the carrier handles it as it would a single
// consumer's (it recovers and ends that source's connection).
type fanout []Consumer

// ConsumerPanic is what a Registry with several consumers panics with when
// one of them panicked: the consumer's position, its panic value, and the
// stack where it panicked (a re-raised panic would otherwise show only the
// fan-out's).
type ConsumerPanic struct {
	Consumer int // index in the NewRegistry arguments, nils left out
	Value    any
	Stack    []byte
}

func (p *ConsumerPanic) Error() string {
	return fmt.Sprintf("sourceproto: consumer %d panicked: %v\n%s", p.Consumer, p.Value, p.Stack)
}

// Unwrap returns the panic value when it is an error.
func (p *ConsumerPanic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// catch is deferred around one consumer's call; it keeps the first panic.
func catch(i int, first **ConsumerPanic) {
	if v := recover(); v != nil && *first == nil {
		*first = &ConsumerPanic{Consumer: i, Value: v, Stack: debug.Stack()}
	}
}

// rethrow raises the first panic once every consumer had the call.
func rethrow(first *ConsumerPanic) {
	if first != nil {
		panic(first)
	}
}

func (f fanout) SourceOpened(info SourceInfo) {
	var p *ConsumerPanic
	for i, c := range f {
		func() { defer catch(i, &p); c.SourceOpened(info) }()
	}
	rethrow(p)
}

func (f fanout) SourceClosed(ref SourceRef, code CloseCode) {
	var p *ConsumerPanic
	for i, c := range f {
		func() { defer catch(i, &p); c.SourceClosed(ref, code) }()
	}
	rethrow(p)
}

func (f fanout) Replaced(ref SourceRef, seq uint64, r *Replace) {
	var p *ConsumerPanic
	for i, c := range f {
		func() { defer catch(i, &p); c.Replaced(ref, seq, r) }()
	}
	rethrow(p)
}

func (f fanout) Appended(ref SourceRef, seq uint64, a *Append) {
	var p *ConsumerPanic
	for i, c := range f {
		func() { defer catch(i, &p); c.Appended(ref, seq, a) }()
	}
	rethrow(p)
}

func (f fanout) Gap(ref SourceRef, g Gap) {
	var p *ConsumerPanic
	for i, c := range f {
		func() { defer catch(i, &p); c.Gap(ref, g) }()
	}
	rethrow(p)
}

func (f fanout) Response(ref SourceRef, b Body) {
	var p *ConsumerPanic
	for i, c := range f {
		func() { defer catch(i, &p); c.Response(ref, b) }()
	}
	rethrow(p)
}
