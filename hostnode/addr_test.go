package hostnode

import (
	"errors"
	"testing"
)

func TestParseInspectorAddr(t *testing.T) {
	const uuid = "/0f2c3d4e-1111-2222-3333-444455556666"
	tests := []struct {
		in              string
		wsURL, hostport string
		discover        bool
		wantErr         error
	}{
		{in: "ws://127.0.0.1:9229" + uuid, wsURL: "ws://127.0.0.1:9229" + uuid, hostport: "127.0.0.1:9229"},
		{in: "ws://localhost:9229" + uuid, wsURL: "ws://localhost:9229" + uuid, hostport: "localhost:9229"},
		{in: "ws://[::1]:9229" + uuid, wsURL: "ws://[::1]:9229" + uuid, hostport: "[::1]:9229"},
		{in: "127.0.0.1:9229", hostport: "127.0.0.1:9229", discover: true},
		{in: "localhost:1", hostport: "localhost:1", discover: true},
		{in: "[::1]:65535", hostport: "[::1]:65535", discover: true},
		{in: "127.1.2.3:9229", hostport: "127.1.2.3:9229", discover: true},

		{in: "0.0.0.0:9229", wantErr: ErrNotLoopback},
		{in: "[::]:9229", wantErr: ErrNotLoopback},
		{in: "example.com:9229", wantErr: ErrNotLoopback},
		{in: "192.168.1.2:9229", wantErr: ErrNotLoopback},
		{in: "[fe80::1%eth0]:9229", wantErr: ErrNotLoopback},
		{in: "ws://0.0.0.0:9229" + uuid, wantErr: ErrNotLoopback},
		{in: "ws://example.com:9229" + uuid, wantErr: ErrNotLoopback},
		{in: "http://127.0.0.1:9229" + uuid, wantErr: ErrBadAddr},
		{in: "wss://127.0.0.1:9229" + uuid, wantErr: ErrBadAddr},
		{in: "ws://127.0.0.1:9229", wantErr: ErrBadAddr},
		{in: "ws://127.0.0.1:9229/", wantErr: ErrBadAddr},
		{in: "ws://127.0.0.1" + uuid, wantErr: ErrBadAddr},
		{in: "ws://u:p@127.0.0.1:9229" + uuid, wantErr: ErrBadAddr},
		{in: "ws://127.0.0.1:9229" + uuid + "?x=1", wantErr: ErrBadAddr},
		{in: "127.0.0.1", wantErr: ErrBadAddr},
		{in: "9229", wantErr: ErrBadAddr},
		{in: "127.0.0.1:0", wantErr: ErrBadAddr},
		{in: "127.0.0.1:65536", wantErr: ErrBadAddr},
		{in: "127.0.0.1:+80", wantErr: ErrBadAddr},
		{in: "", wantErr: ErrBadAddr},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			ws, hp, disc, err := ParseInspectorAddr(tc.in)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if ws != "" || hp != "" || disc {
					t.Errorf("error with results %q %q %v", ws, hp, disc)
				}
				return
			}
			if err != nil || ws != tc.wsURL || hp != tc.hostport || disc != tc.discover {
				t.Errorf("= %q, %q, %v, %v; want %q, %q, %v", ws, hp, disc, err, tc.wsURL, tc.hostport, tc.discover)
			}
		})
	}
}
