package hostnode

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestHostResendsNotifyUntilAnswered: Node 20 sometimes drops a session's
// first message. A fake inspector that drops the watcher's first
// NodeRuntime.notifyWhenWaitingForDisconnect still gets the request (a
// re-send), answers it, and its waitingForDisconnect then ends the host:
// the script's end is never missed.
func TestHostResendsNotifyUntilAnswered(t *testing.T) {
	var notifies atomic.Int32
	mux := http.NewServeMux()
	var wsURL string
	mux.HandleFunc("/json/list", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`[{"title":"app.js","url":"file:///app.js","webSocketDebuggerUrl":"` + wsURL + `"}]`))
	})
	mux.HandleFunc("/target", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		for {
			_, msg, err := c.Read(ctx)
			if err != nil {
				return
			}
			if !strings.Contains(string(msg), "notifyWhenWaitingForDisconnect") {
				continue
			}
			if notifies.Add(1) == 1 {
				continue // dropped, as Node 20 sometimes does
			}
			c.Write(ctx, websocket.MessageText, []byte(`{"id":1,"result":{}}`))
			c.Write(ctx, websocket.MessageText, []byte(`{"method":"NodeRuntime.waitingForDisconnect","params":{}}`))
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	wsURL = "ws://" + strings.TrimPrefix(srv.URL, "http://") + "/target"
	h, err := AttachHost(context.Background(), wsURL, HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Finish("test over")
	select {
	case <-h.ScriptFinished():
	case <-time.After(30 * time.Second): // a hang detector, not a speed check
		t.Fatalf("the script's end was never seen (%d notify requests reached the inspector)", notifies.Load())
	}
	if n := notifies.Load(); n < 2 {
		t.Fatalf("%d notify requests; want the dropped one re-sent", n)
	}
}
