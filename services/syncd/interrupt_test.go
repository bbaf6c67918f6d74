package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/hhnet"
	"github.com/storybox/storybox/services/internal/syncapi"
)

// transferSize is the file sent while links are cut and programs killed:
// the 100 MB scaled to what, at the rate the test allows on the
// link (transferRate), still lasts several seconds, so that every
// interruption lands mid-transfer on a machine of two shared cores.
const (
	transferSize = 24 << 20
	transferRate = "24mbit"
)

// partial reports whether path exists with other content than want: a
// partial file under its final name, which Syncthing must never leave
// (it writes .syncthing.NAME.tmp and renames it when complete).
func partial(path string, want []byte) bool {
	b, err := os.ReadFile(path)
	return err == nil && !bytes.Equal(b, want)
}

// TestInterruptedTransfers: B's link is cut during a large transfer and
// restored; Syncthing on the sending box and on the receiving box is
// killed (SIGKILL) mid-transfer, and syncd itself on the receiving box.
// No partial file ever appears under its name, every transfer completes,
// and what arrives is what was sent.
func TestInterruptedTransfers(t *testing.T) {
	net, boxes := household(t, 2)
	a, b := boxes[0], boxes[1]
	a.add(t, b)
	b.add(t, a)
	for _, x := range boxes {
		waitFor(t, 60*time.Second, fmt.Sprintf("box %d connected", x.i), func() bool {
			st := x.status(t)
			return st.State == syncapi.StateRunning && len(st.Boxes) == 1 && st.Boxes[0].Connected
		})
	}
	if err := net.Limit(b.i, transferRate); err != nil {
		t.Fatal(err)
	}
	// current is the file of the step under way; onB the bytes of it on B.
	gross := filepath.Join(b.media, "Gross")
	var current string
	onB := func() int64 {
		n, _ := hhnet.Received(hhnet.SyncthingTemp(gross, current))
		return n
	}
	for _, step := range []struct {
		name string
		// interrupt returns the bytes on B when the transfer stopped.
		interrupt func() int64
	}{
		{"B's link cut and restored", func() int64 {
			if err := net.Link(b.i, false); err != nil {
				t.Fatal(err)
			}
			// The connection outlives a short cut (TCP retransmits);
			// what is seen is the transfer standing still: no block
			// written for a second.
			var last int64 = -1
			still := 0
			waitFor(t, 60*time.Second, "the transfer standing still", func() bool {
				n, ok := hhnet.Received(hhnet.SyncthingTemp(gross, current))
				if !ok {
					return false
				}
				if n == last {
					still++
				} else {
					still, last = 0, n
				}
				return still >= 10
			})
			if err := net.Link(b.i, true); err != nil {
				t.Fatal(err)
			}
			return last
		}},
		{"Syncthing killed on the receiving box", func() int64 {
			pid := syncthingPID(t, b)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			waitFor(t, 10*time.Second, "B's Syncthing gone", func() bool { return syscall.Kill(pid, 0) != nil })
			return onB()
		}},
		{"Syncthing killed on the sending box", func() int64 {
			_ = syscall.Kill(syncthingPID(t, a), syscall.SIGKILL)
			return onB()
		}},
		{"syncd killed on the receiving box, and started again", func() int64 {
			_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
			<-b.done
			n := onB()
			b.start(t)
			return n
		}},
	} {
		name := strings.ReplaceAll(step.name, " ", "_") + ".mp3"
		current = name
		data := make([]byte, transferSize)
		_, _ = rand.Read(data)
		dst := filepath.Join(gross, name)
		stop := make(chan struct{})
		bad := make(chan string, 1)
		go func() {
			// Watches the whole time for a partial file under the name.
			for {
				select {
				case <-stop:
					return
				default:
				}
				if partial(dst, data) {
					bad <- "partial file listed"
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		write(t, filepath.Join(a.media, "Gross", name), data)
		// Under way: a good part of the file, but not all of it, on B
		// when the interruption comes.
		var got int64
		waitFor(t, 60*time.Second, step.name+": the transfer under way", func() bool {
			n, ok := hhnet.Received(hhnet.SyncthingTemp(gross, name))
			got = n
			return ok && n >= transferSize/8 || hasContent(dst, data)
		})
		if got >= transferSize || hasContent(dst, data) {
			t.Fatalf("%s: the transfer was complete (%d bytes) before the interruption", step.name, got)
		}
		n := step.interrupt()
		if n <= 0 || n >= transferSize {
			t.Fatalf("%s: %d of %d bytes on B when the transfer stopped: not mid-transfer", step.name, n, transferSize)
		}
		t.Logf("%s: interrupted with %d of %d bytes on B", step.name, n, transferSize)
		waitFor(t, 180*time.Second, step.name+": the transfer complete", func() bool { return hasContent(dst, data) })
		close(stop)
		select {
		case msg := <-bad:
			t.Fatalf("%s: %s", step.name, msg)
		default:
		}
		if sha256.Sum256(data) != sha256.Sum256(mustRead(t, dst)) {
			t.Fatalf("%s: content differs", step.name)
		}
		t.Logf("%s: complete", step.name)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
