package trace

import (
	"errors"
	"testing"

	"github.com/go-json-experiment/json"
)

// TestHubDropsSlowSubscriber: publishing never blocks; a subscriber whose
// queue overflows is dropped and told why, the others keep receiving.
func TestHubDropsSlowSubscriber(t *testing.T) {
	h := newHub()
	slow, err := h.subscribe("")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := h.subscribe("tr-other")
	for i := range subscriberQueue + 1 {
		h.publish("tr-a", Event{Seq: int64(i + 1), Kind: KindOutput})
	}
	select {
	case <-slow.gone:
	default:
		t.Fatal("overflowing subscriber not dropped")
	}
	if !h.wasSlow(slow) || len(slow.ch) != subscriberQueue {
		t.Errorf("slow %v, queued %d", h.wasSlow(slow), len(slow.ch))
	}
	var first StreamMessage
	if err := json.Unmarshal(<-slow.ch, &first); err != nil || first.SessionID != "tr-a" || first.Event.Seq != 1 {
		t.Errorf("first message %+v, %v", first, err)
	}
	if len(other.ch) != 0 {
		t.Errorf("filtered subscriber got %d messages", len(other.ch))
	}
	h.publish("tr-other", Event{Seq: 1})
	if len(other.ch) != 1 {
		t.Error("filtered subscriber missed its session")
	}
	h.unsubscribe(slow)
	h.close()
	<-other.gone
	if h.wasSlow(other) {
		t.Error("shutdown reported as slowness")
	}
	h.unsubscribe(other)
	h.wait()
	if _, err := h.subscribe(""); !errors.Is(err, ErrClosed) {
		t.Errorf("subscribe after close: %v", err)
	}
}
