package haserve

import (
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestOffWithoutItsDirectoryAndListenerClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A file where the data directory should be: the secrets cannot be kept.
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(data, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := Open(Config{Listener: ln, Data: data, Host: "box", ID: "b1"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if s != nil {
		t.Fatal("the API is on without a place for its secrets")
	}
	if s.Admin() != nil {
		t.Error("an off API has an admin side")
	}
	if _, err := ln.Accept(); err == nil {
		t.Error("the listener of an API that is off stays open")
	}
}

func TestPortIsTheListeners(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := Open(Config{Listen: ":8443", Listener: ln, Data: t.TempDir(), Host: "box", ID: "b1"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if s == nil || s.Admin() == nil {
		t.Fatal("the API is off with a usable data directory")
	}
	if got, want := s.port(), ln.Addr().(*net.TCPAddr).Port; got != want {
		t.Errorf("port %d, want the listener's %d", got, want)
	}
	st, err := s.Admin().Status()
	if err != nil {
		t.Fatal(err)
	}
	if got := st.(map[string]any)["port"]; got != s.port() {
		t.Errorf("the admin page is told port %v, want %d", got, s.port())
	}
}
