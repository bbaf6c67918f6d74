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

// temporary reports whether Syncthing is receiving name in dir: its
// temporary file exists and has data.
func temporary(dir, name string) bool {
	fi, err := os.Stat(filepath.Join(dir, ".syncthing."+name+".tmp"))
	return err == nil && fi.Size() > 0
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
	for _, step := range []struct {
		name      string
		interrupt func()
	}{
		{"B's link cut and restored", func() {
			if err := net.Link(b.i, false); err != nil {
				t.Fatal(err)
			}
			// The connection outlives a short cut (TCP retransmits);
			// what is seen is the transfer standing still.
			tmp := filepath.Join(b.media, "Gross", ".syncthing."+strings.ReplaceAll("B's link cut and restored", " ", "_")+".mp3.tmp")
			var last int64 = -1
			still := 0
			waitFor(t, 60*time.Second, "the transfer standing still", func() bool {
				fi, err := os.Stat(tmp)
				if err != nil {
					return false
				}
				if fi.Size() == last {
					still++
				} else {
					still, last = 0, fi.Size()
				}
				return still >= 10 // a second without a byte
			})
			if err := net.Link(b.i, true); err != nil {
				t.Fatal(err)
			}
		}},
		{"Syncthing killed on the receiving box", func() {
			_ = syscall.Kill(syncthingPID(t, b), syscall.SIGKILL)
		}},
		{"Syncthing killed on the sending box", func() {
			_ = syscall.Kill(syncthingPID(t, a), syscall.SIGKILL)
		}},
		{"syncd killed on the receiving box, and started again", func() {
			_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
			<-b.done
			b.start(t)
		}},
	} {
		name := strings.ReplaceAll(step.name, " ", "_") + ".mp3"
		data := make([]byte, transferSize)
		_, _ = rand.Read(data)
		dst := filepath.Join(b.media, "Gross", name)
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
		waitFor(t, 60*time.Second, step.name+": the transfer under way", func() bool { return temporary(filepath.Join(b.media, "Gross"), name) })
		step.interrupt()
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
