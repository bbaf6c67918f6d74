package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/hhnet"
	"github.com/storybox/storybox/services/internal/syncapi"
)

// box is one syncd (and the Syncthing it runs) in a namespace of its own.
type box struct {
	i                int
	ns               string
	dir              string
	media, household string
	sock             string
	client           *daemon.Client
	cmd              *exec.Cmd
	log              *syncBuffer
	done             chan struct{}
	syncd, syncthing string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// household makes n boxes on one bridge, each with its own syncd and
// data, and starts them.
func household(t *testing.T, n int) (*hhnet.Net, []*box) {
	t.Helper()
	hhnet.Wanted(t)
	net := hhnet.New(t)
	bin := t.TempDir()
	syncthing := hhnet.Syncthing(t, bin)
	syncd := filepath.Join(bin, "syncd")
	if out, err := exec.Command("go", "build", "-o", syncd, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build syncd: %v\n%s", err, out)
	}
	var boxes []*box
	for i := 1; i <= n; i++ {
		dir := t.TempDir()
		b := &box{i: i, ns: net.Box(t, i), dir: dir, media: filepath.Join(dir, "media"), household: filepath.Join(dir, "data/household"),
			sock: filepath.Join(dir, "syncd.sock"), syncd: syncd, syncthing: syncthing, log: &syncBuffer{}}
		b.client = daemon.NewClient(b.sock, "syncd", "household service unavailable")
		b.start(t)
		boxes = append(boxes, b)
	}
	t.Cleanup(func() {
		for _, b := range boxes {
			b.stop()
			if t.Failed() {
				t.Logf("box %d's log:\n%s", b.i, b.log.String())
			}
		}
	})
	return net, boxes
}

func (b *box) start(t *testing.T) {
	t.Helper()
	b.cmd = hhnet.Command(b.ns, b.syncd, "-socket", b.sock, "-state", filepath.Join(b.dir, "state"), "-syncthing", b.syncthing,
		"-household", b.household, "-media", b.media, "-name", fmt.Sprintf("box%d", b.i), "-browse=false")
	b.cmd.Stdout, b.cmd.Stderr = b.log, b.log
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b.done = make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(b.done) }()
	waitFor(t, 60*time.Second, fmt.Sprintf("box %d's syncd answers", b.i), func() bool {
		var st syncapi.Status
		return b.client.Call(context.Background(), http.MethodGet, "/status", nil, &st) == nil
	})
}

func (b *box) stop() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
	}
}

func (b *box) status(t *testing.T) syncapi.Status {
	t.Helper()
	var st syncapi.Status
	if err := b.client.Call(context.Background(), http.MethodGet, "/status", nil, &st); err != nil {
		t.Fatalf("box %d: %v", b.i, err)
	}
	return st
}

func (b *box) add(t *testing.T, o *box) {
	t.Helper()
	id := o.status(t).DeviceID
	req := syncapi.AddBox{DeviceID: id, Name: fmt.Sprintf("box%d", o.i), Address: "tcp://" + hhnet.Addr(o.i) + ":22000"}
	if err := b.client.Call(context.Background(), http.MethodPost, "/boxes", req, nil); err != nil {
		t.Fatalf("box %d adds box %d: %v", b.i, o.i, err)
	}
}

// waitFor polls cond every 100 ms until it holds or limit passes: it waits
// for the state it needs, and the limit only bounds a failure.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("after %s: not %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func hasContent(path string, want []byte) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Equal(b, want)
}

func gone(path string) bool {
	_, err := os.Stat(path)
	return errors.Is(err, os.ErrNotExist)
}

// TestHouseholdOfTwo: a box alone runs no Syncthing; two boxes that added
// each other share the library and the household folder both ways,
// deletions included, and each sees the other connected and in sync.
// Syncthing's REST API answers on loopback only, with the key.
func TestHouseholdOfTwo(t *testing.T) {
	_, boxes := household(t, 2)
	a, b := boxes[0], boxes[1]
	for _, x := range boxes {
		st := x.status(t)
		if st.State != syncapi.StateAlone || len(st.Boxes) != 0 || st.DeviceID == "" {
			t.Fatalf("box %d before pairing: %+v", x.i, st)
		}
		if strings.Contains(x.log.String(), "Syncthing") && !strings.Contains(x.log.String(), "starts when a second box is added") {
			t.Fatalf("box %d ran Syncthing alone:\n%s", x.i, x.log.String())
		}
	}
	a.add(t, b)
	b.add(t, a)
	for _, x := range boxes {
		waitFor(t, 60*time.Second, fmt.Sprintf("box %d connected", x.i), func() bool {
			st := x.status(t)
			return st.State == syncapi.StateRunning && len(st.Boxes) == 1 && st.Boxes[0].Connected
		})
	}
	checkStaysHome(t, a, b)
	song := bytes.Repeat([]byte("la"), 300_000)
	write(t, filepath.Join(a.media, "Lieder", "01.mp3"), song)
	card := []byte(`{"card":"0451"}`)
	write(t, filepath.Join(b.household, "cards", "0451.json"), card)
	waitFor(t, 60*time.Second, "A's upload on B", func() bool { return hasContent(filepath.Join(b.media, "Lieder", "01.mp3"), song) })
	waitFor(t, 60*time.Second, "B's card on A", func() bool { return hasContent(filepath.Join(a.household, "cards", "0451.json"), card) })

	if err := os.RemoveAll(filepath.Join(b.media, "Lieder")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "B's deletion on A", func() bool { return gone(filepath.Join(a.media, "Lieder")) })
	waitFor(t, 30*time.Second, "both in sync", func() bool {
		for _, x := range boxes {
			st := x.status(t)
			if len(st.Folders) != 2 || st.Boxes[0].NeedBytes != 0 || st.Boxes[0].Completion != 100 {
				return false
			}
			for _, f := range st.Folders {
				if f.NeedFiles != 0 || f.State != "idle" {
					return false
				}
			}
		}
		return true
	})
}
