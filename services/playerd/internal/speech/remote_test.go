package speech

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/fetch"
)

func speechServer(t *testing.T, ln net.Listener) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "audio/wav")
		io.WriteString(w, "RIFF")
	}))
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return "http://" + ln.Addr().String() + "/speak"
}

// The speech server is never the box itself: loopback only where the
// policy allows it (tests), and none of the box's real addresses, neither
// when the voice is checked nor on connecting.
func TestRemoteVoiceNeverTheBoxItself(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := speechServer(t, ln)
	req := Request{Text: "hallo", Settings: Settings{Language: "de"}}
	if _, err := (&RemoteVoice{URL: url, Policy: fetch.Policy{AllowLoopback: true}}).Render(context.Background(), req); err != nil {
		t.Fatalf("loopback where allowed: %v", err)
	}
	v := &RemoteVoice{URL: url}
	if err := v.Available(); !errors.Is(err, ErrUnavailable) || !errors.Is(err, fetch.ErrForbidden) {
		t.Errorf("Available on loopback: %v", err)
	}
	if _, err := v.Render(context.Background(), req); !errors.Is(err, fetch.ErrForbidden) {
		t.Errorf("Render on loopback: %v", err)
	}

	all, err := fetch.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range all {
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			continue
		}
		ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		url := speechServer(t, ln)
		v := &RemoteVoice{URL: url, Policy: fetch.Policy{AllowLoopback: true}}
		if err := v.Available(); !errors.Is(err, fetch.ErrForbidden) {
			t.Errorf("Available at the box's own %s: %v", ip, err)
		}
		if _, err := v.Render(context.Background(), req); !errors.Is(err, fetch.ErrForbidden) {
			t.Errorf("Render at the box's own %s: %v", ip, err)
		}
	}
}
