package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/hhnet"
	"github.com/storybox/storybox/services/internal/syncapi"
	"github.com/storybox/storybox/services/playerd/internal/library"
)

// What the household test needs of a box beyond its API: a card reader to
// present cards on, and a media disk that can fill up.

// controlSocket is where the test build's card reader is reached: playerd
// is built with -tags soaktest (soaktest.go, internal/soakctl), whose card
// reader is inputtest's, the fake the in-process card tests use, behind a
// Unix socket. A socket bound to a path is reachable from outside the
// box's network namespace.
func (b *nsBox) controlSocket() string { return filepath.Join(b.dir, "control.sock") }

// present puts card on the box's card reader, as a child does.
func (b *nsBox) present(card string) {
	b.t.Helper()
	conn, err := net.DialTimeout("unix", b.controlSocket(), 5*time.Second)
	if err != nil {
		b.t.Fatalf("box %d: card reader: %v", b.i, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(conn, "card %s\n", card); err != nil {
		b.t.Fatalf("box %d: card reader: %v", b.i, err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ok" {
		b.t.Fatalf("box %d: card %s on the reader: %q %v", b.i, card, line, err)
	}
}

// status is the box's /api/status, or nil while it does not answer.
func (b *nsBox) status() map[string]any {
	v, err := b.get("/api/status")
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

// plays waits until the box plays folder.
func (b *nsBox) plays(folder string) {
	b.t.Helper()
	b.waitFor(30*time.Second, "playing folder "+folder, func() bool {
		st := b.status()
		return st != nil && st["state"] == "playing" && st["folder_id"] == folder
	})
}

// smallDisk puts the box's media directory on a tmpfs of size bytes, so
// that Syncthing meets a real full disk (ENOSPC, and its own free-space
// check). Mounted before the box starts (each program's namespace gets a
// copy of the mount), unmounted after its programs ended.
func smallDisk(t *testing.T, dir string, size int64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		t.Fatalf("a small media disk: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// noiseWAV is a 16-bit stereo WAV of exactly n bytes of random samples:
// 100 MB of it is made in a fraction of a second (a sine tone that long
// takes seconds), and no two of its blocks are alike, so every byte
// crosses the link.
func noiseWAV(n int, seed uint64) []byte {
	const header = 44
	data := n - header
	data -= data % 4
	buf := make([]byte, header+data)
	copy(buf, "RIFF")
	binary.LittleEndian.PutUint32(buf[4:], uint32(36+data))
	copy(buf[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(buf[16:], 16)
	binary.LittleEndian.PutUint16(buf[20:], 1)
	binary.LittleEndian.PutUint16(buf[22:], 2)
	binary.LittleEndian.PutUint32(buf[24:], 44100)
	binary.LittleEndian.PutUint32(buf[28:], 44100*4)
	binary.LittleEndian.PutUint16(buf[32:], 4)
	binary.LittleEndian.PutUint16(buf[34:], 16)
	copy(buf[36:], "data")
	binary.LittleEndian.PutUint32(buf[40:], uint32(data))
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	_, _ = rand.NewChaCha8(s).Read(buf[header:])
	return buf
}

// sameContent reports whether path holds exactly data.
func sameContent(path string, data []byte) bool {
	got, err := os.ReadFile(path)
	return err == nil && sha256.Sum256(got) == sha256.Sum256(data)
}

// standingStill waits until the file at path has not grown for a second:
// what a cut link looks like from the receiving box (the connection
// outlives a short cut, TCP retransmitting). It returns the bytes
// received.
func (b *nsBox) standingStill(path string) int64 {
	b.t.Helper()
	var last int64 = -1
	still := 0
	b.waitFor(60*time.Second, "the transfer standing still", func() bool {
		n, ok := hhnet.Received(path)
		if !ok {
			return false
		}
		if n == last {
			still++
		} else {
			still, last = 0, n
		}
		return still >= 5 // a second without a byte (waitFor polls every 200 ms)
	})
	return last
}

// The household test's sizes: the 100 MB transfer, at a rate that
// makes it last at least 8 s on each link (long enough to cut B's link in
// the middle, short enough to add little to the test), and C's media disk,
// which holds the 100 MB file and then has no room for a 40 MB one.
const (
	largeSize   = 100_000_000
	largeRate   = "100mbit"
	cMediaDisk  = 128 << 20
	overflowLen = 40_000_000
)

// largeTransfer: a 100 MB file added on A while B's and C's links are
// limited; once it is under way to both (a quarter of it on B), C's
// playerd is killed (SIGKILL) and started again and B's link is cut until
// its transfer stands still, then restored. B never lists the track before it is complete (its
// library is polled throughout), and B and C end with every byte.
func largeTransfer(t *testing.T, n *hhnet.Net, a, b, c *nsBox) {
	t.Helper()
	for _, x := range []*nsBox{b, c} {
		if err := n.Limit(x.i, largeRate); err != nil {
			t.Fatal(err)
		}
	}
	big := noiseWAV(largeSize, 1)
	final := func(x *nsBox) string { return filepath.Join(x.media, "Gross", "lang.wav") }
	tmp := func(x *nsBox) string { return hhnet.SyncthingTemp(filepath.Join(x.media, "Gross"), "lang.wav") }
	partialSeen := make(chan string, 1)
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if tracks(b.folder("Gross")) > 0 {
				// Listed: complete now, or never in the right.
				if !sameContent(final(b), big) {
					partialSeen <- "listed before the file was complete under its name"
				}
				return
			}
		}
	}()
	start := time.Now()
	putFile(t, filepath.Join(a.media, "Gross", "lang.wav"), big)
	receiving := func(x *nsBox) func() bool {
		return func() bool {
			n, ok := hhnet.Received(tmp(x))
			return ok && n > 0
		}
	}
	c.waitFor(60*time.Second, "the transfer to C under way", receiving(c))
	// B's link goes down with a good part of the file on B, so that
	// what is resumed is a real partial file.
	b.waitFor(60*time.Second, "a quarter of the file on B", func() bool {
		n, ok := hhnet.Received(tmp(b))
		return ok && n >= largeSize/4
	})
	c.kill("playerd")
	c.start("playerd")
	if err := n.Link(b.i, false); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	cut := b.standingStill(tmp(b))
	if err := n.Link(b.i, true); err != nil {
		t.Fatal(err)
	}
	restored := time.Now()
	if cut >= largeSize {
		t.Errorf("B's link was cut after the whole file (%d bytes) had arrived", cut)
	}
	listed := map[int]time.Duration{}
	for _, x := range []*nsBox{b, c} {
		x.waitFor(180*time.Second, "the 100 MB file listed", func() bool { return tracks(x.folder("Gross")) == 1 })
		listed[x.i] = time.Since(start)
	}
	close(stopWatch)
	<-watched
	select {
	case msg := <-partialSeen:
		t.Fatalf("B: %s", msg)
	default:
	}
	for _, x := range []*nsBox{b, c} {
		if !sameContent(final(x), big) {
			t.Fatalf("box %d: the 100 MB file arrived with other content", x.i)
		}
	}
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	t.Logf("100 MB at %s: B's link cut %s after the file was added on A, with %.1f MB received, for %s; listed complete on B after %s, on C after %s",
		largeRate, r(down.Sub(start)), float64(cut)/1e6, r(restored.Sub(down)), r(listed[b.i]), r(listed[c.i]))
}

// mediaDiskFull: a 40 MB file added on A does not fit on C's media disk
// beside the 100 MB one. B receives it; C's household status says its disk
// is full (disk_full, which its admin page shows in red, and the media
// folder's error), C does not list the file, still plays and answers; a
// parent deletes the large folder on C, and the file arrives.
func mediaDiskFull(t *testing.T, a, b, c *nsBox, playable string) {
	t.Helper()
	over := noiseWAV(overflowLen, 2)
	start := time.Now()
	putFile(t, filepath.Join(a.media, "Voll", "voll.wav"), over)
	b.waitFor(90*time.Second, "the 40 MB file on B", func() bool { return tracks(b.folder("Voll")) == 1 })
	var why string
	c.waitFor(90*time.Second, "C's full disk reported", func() bool {
		h := c.polled()
		if h["disk_full"] != true {
			return false
		}
		folders, _ := h["folders"].([]any)
		for _, f := range folders {
			if m := f.(map[string]any); m["id"] == syncapi.MediaFolder {
				why, _ = m["error"].(string)
			}
		}
		return why != ""
	})
	t.Logf("C's full disk reported %s after the file was added on A: %s", time.Since(start).Round(100*time.Millisecond), why)
	if tracks(c.folder("Voll")) != 0 {
		t.Error("C lists a file it has no room for")
	}
	c.ok("POST", "/api/command", `{"action":"folder","folder_id":"`+playable+`"}`)
	c.plays(playable)
	c.ok("POST", "/api/command", `{"action":"stop"}`)

	start = time.Now()
	c.ok("DELETE", "/api/admin/library/folders/"+library.ID("Gross"), "")
	c.waitFor(120*time.Second, "the 40 MB file on C once there is room", func() bool {
		return tracks(c.folder("Voll")) == 1 && sameContent(filepath.Join(c.media, "Voll", "voll.wav"), over)
	})
	c.waitFor(60*time.Second, "C's full disk no longer reported", func() bool { return c.polled()["disk_full"] == false })
	t.Logf("the 40 MB file on C %s after room was made", time.Since(start).Round(100*time.Millisecond))
}
