package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// What the kill test needs of the box and of the run.
const (
	killRounds   = 20
	durableAfter = time.Second // an acknowledged change older than this must survive
	trackSeconds = 30
	maxVolume    = 80 // settings.Defaults: commands above it are capped
	startVolume  = 30 // settings.Defaults: a restart never starts louder
)

// SIGKILL at random moments while commands stream in: every change
// acknowledged more than a second before the kill is in state.json after
// it, every JSON file in the data directory parses, and the restarted box
// comes up in exactly the state on disk (never from a temporary file).
func TestKillNineKeepsAcknowledgedChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills playerd 20 times")
	}
	bin := buildPlayerd(t)
	media, data := t.TempDir(), t.TempDir()
	var folders []string
	for _, name := range []string{"Hoerspiele/A", "Hoerspiele/B", "Musik/C"} {
		for i := range 3 {
			// 8 kHz keeps the library small; the player resamples.
			path := filepath.Join(media, name, fmt.Sprintf("Folge %d.wav", i+1))
			if err := testmedia.WriteTone(path, trackSeconds, 8000, 220*float64(i+1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	var prev *state.Saved // what the last kill left on disk
	var acked, checked, temps int
	start := time.Now()
	for round := range killRounds {
		b := startPlayerd(t, bin, media, data)
		if folders == nil {
			folders = b.folderIDs(t)
		}
		if prev != nil {
			b.checkRestored(t, *prev)
		}
		// Most kills come after changes old enough to be checked; some
		// early, while the box has just started.
		after := time.Duration(1000+rng.IntN(1200)) * time.Millisecond
		if round%4 == 3 {
			after = time.Duration(rng.IntN(1000)) * time.Millisecond
		}
		l := b.stream(t, rng, folders, after)
		disk, n := checkDataDir(t, data)
		temps += n
		k := l.lastDurable()
		if k > 0 {
			if why := l.explain(disk, k); why != "" {
				t.Errorf("round %d (seed %d): kill %v after the start; the newest change acknowledged over %v before it (%d of %d: %s at %v) is lost: %s",
					round, seed, l.killAt.Sub(l.acks[0].at).Round(time.Millisecond), durableAfter,
					k, len(l.acks)-1, l.acks[k].cmd, l.acks[k].at.Sub(l.acks[0].at).Round(time.Millisecond), why)
			}
		}
		acked += len(l.acks) - 1
		checked += k
		prev = &disk
	}
	b := startPlayerd(t, bin, media, data)
	b.checkRestored(t, *prev)
	b.kill(t)
	t.Logf("%d kills, %d changes acknowledged, %d of them over %v before a kill and checked, %d temporary files left by kills (removed at start), %v",
		killRounds, acked, checked, durableAfter, temps, time.Since(start).Round(time.Millisecond))
}

type proc struct {
	cmd  *exec.Cmd
	data string
	base string
	log  *readyWriter
	http *http.Client
}

// readyWriter is playerd's stderr: it keeps the log for failures and
// reports the address of the "playerd ready" line.
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	seen  int
	ready chan string
}

var readyLine = regexp.MustCompile(`msg="playerd ready" listen=(\S+)`)

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		rest := w.buf.Bytes()[w.seen:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		if m := readyLine.FindSubmatch(rest[:i]); m != nil {
			select {
			case w.ready <- string(m[1]):
			default:
			}
		}
		w.seen += i + 1
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startPlayerd runs the binary on a port the kernel picks, with extra
// flags, and waits for its ready line.
func startPlayerd(t *testing.T, bin, media, data string, extra ...string) *proc {
	t.Helper()
	b := &proc{data: data, log: &readyWriter{ready: make(chan string, 1)}, http: &http.Client{Timeout: 10 * time.Second}}
	b.cmd = exec.Command(bin, append([]string{"-listen", "127.0.0.1:0", "-media", media, "-data", data, "-output", "null",
		"-hat", "", "-fb", "none", "-touch", "none", "-console", "", "-speech-remote", "",
		"-speech-program", filepath.Join(t.TempDir(), "none")}, extra...)...)
	b.cmd.Stderr = b.log
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = b.cmd.Process.Kill(); <-exited })
	select {
	case addr := <-b.log.ready:
		b.base = "http://" + addr
	case <-exited:
		t.Fatalf("playerd exited before it was ready:\n%s", b.log)
	case <-time.After(30 * time.Second): // only bounds a hang
		t.Fatalf("playerd not ready:\n%s", b.log)
	}
	return b
}

func (b *proc) kill(t *testing.T) {
	t.Helper()
	if err := b.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
}

// status is what the test compares of the player status.
type status struct {
	State    string  `json:"state"`
	FolderID *string `json:"folder_id"`
	Index    int     `json:"index"`
	Position float64 `json:"position"`
	Volume   int     `json:"volume"`
}

func (b *proc) get(t *testing.T, path string, v any) {
	t.Helper()
	resp, data, err := exchange(b.http, "GET", b.base+path, nil)
	if err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, b.log)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

func (b *proc) folderIDs(t *testing.T) []string {
	t.Helper()
	// The API answers while the first scan runs; wait for it. The deadline
	// only bounds a hang.
	waitUntil(t, "the library scan", 60*time.Second, func() bool {
		var info struct {
			Library struct{ Scanned bool } `json:"library"`
		}
		b.get(t, "/api/info", &info)
		return info.Library.Scanned
	})
	var lib []struct {
		ID string `json:"id"`
	}
	b.get(t, "/api/library", &lib)
	var ids []string
	for _, f := range lib {
		ids = append(ids, f.ID)
	}
	if len(ids) != 3 {
		t.Fatalf("library has %d folders, want 3", len(ids))
	}
	return ids
}

// checkRestored: the box starts in the state on disk, paused, never louder
// than the start volume, and has removed the temporaries of state.json.
func (b *proc) checkRestored(t *testing.T, disk state.Saved) {
	t.Helper()
	var st status
	b.get(t, "/api/status", &st)
	want := min(disk.Volume, startVolume)
	if disk.Volume == 0 {
		want = startVolume // never a silent start
	}
	ok := st.Volume == want
	if q := disk.Queue; q == nil {
		ok = ok && st.FolderID == nil
	} else {
		ok = ok && st.FolderID != nil && *st.FolderID == q.FolderID && st.Index == q.Index &&
			math.Abs(st.Position-q.Position) < 0.1 && st.State == "paused"
	}
	if !ok {
		folder := "none"
		if st.FolderID != nil {
			folder = *st.FolderID
		}
		t.Errorf("restarted as %+v (folder %s), but the disk holds volume %d, queue %+v", st, folder, disk.Volume, disk.Queue)
	}
	entries, err := os.ReadDir(b.data)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "."+state.FileName) {
			t.Errorf("%s is still there after the start", e.Name())
		}
	}
}

type ack struct {
	at  time.Time
	cmd string
	st  status
}

// life is one life of the box: the acknowledged commands, the one that may
// have been in flight at the kill, and when the kill came.
type life struct {
	acks     []ack // acks[0] is the state at the start
	inFlight map[string]any
	killAt   time.Time
}

// stream sends random commands until the box is killed after the given time.
func (b *proc) stream(t *testing.T, rng *rand.Rand, folders []string, after time.Duration) *life {
	t.Helper()
	var st status
	b.get(t, "/api/status", &st)
	r := &life{acks: []ack{{at: time.Now(), cmd: "start", st: st}}}
	killed := make(chan struct{})
	var killAt time.Time
	time.AfterFunc(after, func() {
		killAt = time.Now()
		_ = b.cmd.Process.Kill()
		close(killed)
	})
	for {
		cmd := randomCommand(rng, folders, st)
		body, _ := json.Marshal(cmd)
		r.inFlight = cmd
		resp, err := b.http.Post(b.base+"/api/command", "application/json", bytes.NewReader(body))
		if err == nil {
			var next status
			derr := json.NewDecoder(resp.Body).Decode(&next)
			resp.Body.Close()
			if derr == nil && resp.StatusCode == http.StatusOK {
				st = next
				r.acks = append(r.acks, ack{at: time.Now(), cmd: string(body), st: st})
			}
			r.inFlight = nil
			if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusConflict {
				t.Errorf("%s: %s", body, resp.Status)
			}
		}
		if err != nil {
			select { // the kill, unless the box failed on its own
			case <-killed:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s before the kill: %v\n%s", body, err, b.log)
			}
		}
		select {
		case <-killed:
			r.killAt = killAt
			return r
		default:
		}
		// A person's pace, roughly: a few commands a tenth of a second.
		time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
	}
}

func randomCommand(rng *rand.Rand, folders []string, st status) map[string]any {
	switch n := rng.IntN(20); {
	case n < 6:
		v := rng.IntN(maxVolume + 1)
		if v == st.Volume {
			v = (v + 1) % (maxVolume + 1)
		}
		return map[string]any{"action": "volume", "value": v}
	case n < 9:
		return map[string]any{"action": "seek", "value": rng.IntN(trackSeconds - 5)}
	case n < 11:
		return map[string]any{"action": "next"}
	case n < 12:
		return map[string]any{"action": "previous"}
	case n < 14:
		return map[string]any{"action": "pause"}
	case n < 16:
		return map[string]any{"action": "play"}
	case n < 18:
		return map[string]any{"action": "folder", "folder_id": folders[rng.IntN(len(folders))]}
	case n < 19:
		return map[string]any{"action": "resume", "folder_id": folders[rng.IntN(len(folders))], "item_index": rng.IntN(3)}
	default:
		return map[string]any{"action": "stop"}
	}
}

// lastDurable is the index of the newest ack older than durableAfter at
// the kill; 0 (the start) when there is none.
func (r *life) lastDurable() int {
	k := 0
	for i, a := range r.acks {
		if a.at.Before(r.killAt.Add(-durableAfter)) {
			k = i
		}
	}
	return k
}

// explain returns "" when disk is the state after ack k or after a later
// one (or after the command in flight at the kill), else why not.
func (r *life) explain(disk state.Saved, k int) string {
	var why []string
	for j := k; j < len(r.acks); j++ {
		until := r.killAt
		if j+1 < len(r.acks) {
			until = r.acks[j+1].at
		}
		w := matches(disk, r.acks[j].st, until.Sub(r.acks[j].at))
		if w == "" {
			return ""
		}
		if len(why) < 3 {
			why = append(why, fmt.Sprintf("not #%d (%s)", j, w))
		}
	}
	if r.inFlight != nil && matchesInFlight(disk, r.acks[len(r.acks)-1].st, r.inFlight) {
		return ""
	}
	return fmt.Sprintf("disk volume %d, queue %+v; %s …", disk.Volume, disk.Queue, strings.Join(why, "; "))
}

// matches reports how disk differs from the state st a command answered
// with, allowing for playing on for up to playedFor.
func matches(disk state.Saved, st status, playedFor time.Duration) string {
	if disk.Volume != st.Volume {
		return fmt.Sprintf("volume %d", st.Volume)
	}
	q := disk.Queue
	if st.FolderID == nil || st.Index < 0 {
		if q != nil {
			return "no queue"
		}
		return ""
	}
	if q == nil || q.FolderID != *st.FolderID || q.Index != st.Index {
		return fmt.Sprintf("queue %s/%d", *st.FolderID, st.Index)
	}
	lo, hi := st.Position-0.05, st.Position+0.05
	if st.State == "playing" {
		hi += playedFor.Seconds() + 0.5
	}
	if q.Position < lo || q.Position > hi {
		return fmt.Sprintf("position %.2f..%.2f", lo, hi)
	}
	if st.State == "paused" && (st.Index > 0 || st.Position >= 5) {
		rp, ok := disk.Resume[*st.FolderID]
		if !ok || rp.Index != st.Index || math.Abs(rp.Position-st.Position) > 1 {
			return fmt.Sprintf("resume point %d at %.2f", st.Index, st.Position)
		}
	}
	return ""
}

// matchesInFlight: the command sent last may have been carried out and
// saved with its answer lost in the kill. Its result is known in part: the
// new volume, or the same queue entry for pause, play and seek.
func matchesInFlight(disk state.Saved, last status, cmd map[string]any) bool {
	switch cmd["action"] {
	case "volume":
		last.Volume = cmd["value"].(int)
		return matches(disk, last, time.Hour) == ""
	case "pause", "play", "seek":
		if disk.Volume != last.Volume || last.FolderID == nil || disk.Queue == nil {
			return false
		}
		return disk.Queue.FolderID == *last.FolderID && disk.Queue.Index == last.Index
	default:
		return disk.Volume == last.Volume
	}
}

// checkDataDir parses every JSON file in the data directory and returns
// the player state, and how many temporary files the kill left.
func checkDataDir(t *testing.T, dir string) (state.Saved, int) {
	t.Helper()
	temps := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if state.IsTemp(d.Name()) {
			temps++
			return nil
		}
		if strings.HasSuffix(d.Name(), ".json") {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if !json.Valid(data) {
				t.Errorf("%s is corrupt after a kill: %q", d.Name(), data)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var s state.Saved // not written yet: the defaults
	if err := state.ReadJSON(filepath.Join(dir, state.FileName), &s); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("state after a kill: %v", err)
	}
	return s, temps
}
