package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/hhnet"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// nsBox is one box of the household test: netd (its mDNS), syncd (and
// the Syncthing it runs) and playerd, in a network namespace of its own.
type nsBox struct {
	t        *testing.T
	i        int
	ns, dir  string
	media    string
	hc       *http.Client
	procs    map[string]*exec.Cmd
	done     map[string]chan struct{}
	logs     map[string]*logTap
	bins     map[string]string
	mu       sync.Mutex
	deviceID string
}

// householdBins builds the programs the boxes run: playerd, netd and
// syncd from this checkout, Syncthing from the image's pin. playerd is its
// test build (-tags soaktest), whose card reader the test reaches over a
// socket (nsBox.present); the image's playerd differs from it in that
// alone.
func householdBins(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	bins := map[string]string{"syncthing": hhnet.Syncthing(t, dir)}
	for name, pkg := range map[string]string{"playerd": ".", "netd": "../netd", "syncd": "../syncd"} {
		bins[name] = filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", bins[name], pkg)
		if name == "playerd" {
			cmd = exec.Command("go", "build", "-tags", "soaktest", "-o", bins[name], pkg)
		}
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
	}
	return bins
}

// startNSBox starts box i; a mediaDisk above 0 puts its media directory
// on a disk of that many bytes of its own (smallDisk).
func startNSBox(t *testing.T, n *hhnet.Net, i int, bins map[string]string, mediaDisk int64) *nsBox {
	t.Helper()
	b := &nsBox{t: t, i: i, ns: n.Box(t, i), dir: t.TempDir(), bins: bins,
		procs: map[string]*exec.Cmd{}, done: map[string]chan struct{}{}, logs: map[string]*logTap{}}
	b.media = filepath.Join(b.dir, "media")
	if err := os.MkdirAll(b.media, 0o755); err != nil {
		t.Fatal(err)
	}
	if mediaDisk > 0 {
		smallDisk(t, b.media, mediaDisk)
	}
	b.hc = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return hhnet.Dial(b.ns, network, addr)
	}}}
	for _, name := range []string{"netd", "syncd", "playerd"} {
		b.start(name)
	}
	t.Cleanup(func() {
		for _, name := range []string{"playerd", "syncd", "netd"} {
			b.stop(name)
		}
		if t.Failed() {
			for name, l := range b.logs {
				t.Logf("box %d %s:\n%s", i, name, tail(l.String(), 3000))
			}
		}
	})
	b.waitFor(60*time.Second, "playerd answers", func() bool {
		_, err := b.get("/api/health")
		return err == nil
	})
	b.waitFor(60*time.Second, "syncd answers", func() bool {
		h, err := b.get("/api/admin/household")
		if err != nil {
			return false
		}
		b.deviceID, _ = h.(map[string]any)["device_id"].(string)
		return b.deviceID != ""
	})
	return b
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func (b *nsBox) args(name string) []string {
	d := b.dir
	host := fmt.Sprintf("box%d", b.i)
	switch name {
	case "netd":
		return []string{"-socket", d + "/netd.sock", "-state", d + "/netd", "-hostname", host, "-dhcp", "/bin/true"}
	case "syncd":
		return []string{"-socket", d + "/syncd.sock", "-state", d + "/syncd", "-syncthing", b.bins["syncthing"],
			"-household", d + "/data/household", "-media", b.media, "-name", host}
	default:
		return []string{"-listen", ":8090", "-media", b.media, "-data", d + "/data", "-output", "null", "-net", d + "/netd.sock",
			"-sync", d + "/syncd.sock", "-ha-listen", ":8443", "-fb", "none", "-touch", "none", "-input", "none",
			"-speech-program", d + "/none", "-hostname", host}
	}
}

func (b *nsBox) start(name string) {
	b.t.Helper()
	if b.logs[name] == nil {
		b.logs[name] = &logTap{}
	}
	cmd := hhnet.Command(b.ns, b.bins[name], b.args(name)...)
	if name == "playerd" {
		cmd.Env = append(os.Environ(), "STORYBOX_SOAK_CONTROL="+b.controlSocket())
	}
	cmd.Stdout, cmd.Stderr = b.logs[name], b.logs[name]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	b.mu.Lock()
	b.procs[name], b.done[name] = cmd, done
	b.mu.Unlock()
}

func (b *nsBox) stop(name string) {
	b.mu.Lock()
	cmd, done := b.procs[name], b.done[name]
	b.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// kill ends a program with SIGKILL, as a power cut would.
func (b *nsBox) kill(name string) {
	b.mu.Lock()
	cmd, done := b.procs[name], b.done[name]
	b.mu.Unlock()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

func (b *nsBox) do(method, path string, body []byte, ctype string) (int, []byte, error) {
	req, err := http.NewRequest(method, "http://127.0.0.1:8090"+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

func (b *nsBox) get(path string) (any, error) {
	code, data, err := b.do("GET", path, nil, "")
	if err != nil {
		return nil, err
	}
	if code != 200 {
		return nil, fmt.Errorf("GET %s: %d %s", path, code, data)
	}
	var v any
	return v, json.Unmarshal(data, &v)
}

func (b *nsBox) ok(method, path, body string) map[string]any {
	b.t.Helper()
	var raw []byte
	if body != "" {
		raw = []byte(body)
	}
	code, data, err := b.do(method, path, raw, "application/json")
	if err != nil || code/100 != 2 {
		b.t.Fatalf("box %d: %s %s %s: %d %s %v", b.i, method, path, body, code, data, err)
	}
	var v map[string]any
	_ = json.Unmarshal(data, &v)
	return v
}

// polled is the household for a condition waited on: a box busy starting
// Syncthing again may not answer in time, which is not yet a failure.
func (b *nsBox) polled() map[string]any {
	v, err := b.get("/api/admin/household")
	if err != nil {
		return map[string]any{"found": []any{}, "boxes": []any{}, "requests": []any{}}
	}
	return v.(map[string]any)
}

func (b *nsBox) household() map[string]any {
	b.t.Helper()
	v, err := b.get("/api/admin/household")
	if err != nil {
		b.t.Fatalf("box %d: %v", b.i, err)
	}
	return v.(map[string]any)
}

func (b *nsBox) waitFor(limit time.Duration, what string, cond func() bool) {
	b.t.Helper()
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			b.t.Fatalf("box %d: after %s: not %s", b.i, limit, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// folder is the library's folder called name, with its tracks, or nil.
func (b *nsBox) folder(name string) map[string]any {
	v, err := b.get("/api/library")
	if err != nil {
		return nil
	}
	for _, f := range v.([]any) {
		if m := f.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

func tracks(f map[string]any) int {
	if f == nil {
		return 0
	}
	t, _ := f["tracks"].([]any)
	return len(t)
}

// pair: a adds b, found by mDNS; b's parent accepts a's request.
func pair(t *testing.T, a, b *nsBox) {
	t.Helper()
	waitFound(a, b)
	a.ok("POST", "/api/admin/household/boxes", `{"device_id":"`+b.deviceID+`"}`)
	if st := b.household(); len(st["requests"].([]any)) != 1 {
		t.Fatalf("box %d has no request from box %d: %v", b.i, a.i, st["requests"])
	}
	b.ok("POST", "/api/admin/household/requests/"+a.deviceID+"/accept", "")
}

// waitFound waits until a sees b announced by mDNS.
func waitFound(a, b *nsBox) {
	a.t.Helper()
	a.waitFor(90*time.Second, fmt.Sprintf("box %d found by mDNS", b.i), func() bool {
		for _, f := range a.polled()["found"].([]any) {
			if f.(map[string]any)["device_id"] == b.deviceID {
				return true
			}
		}
		return false
	})
}

func connected(b *nsBox, n int) func() bool {
	return func() bool {
		boxes := b.polled()["boxes"].([]any)
		if len(boxes) != n {
			return false
		}
		for _, x := range boxes {
			if x.(map[string]any)["connected"] != true {
				return false
			}
		}
		return true
	}
}

func upload(t *testing.T, b *nsBox, folder, file string, data []byte) string {
	t.Helper()
	f := b.ok("POST", "/api/admin/library/folders", `{"name":"`+folder+`"}`)
	id, _ := f["id"].(string)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	w, _ := mw.CreateFormFile("file", file)
	_, _ = w.Write(data)
	mw.Close()
	code, body, err := b.do("POST", "/api/admin/library/folders/"+id+"/files", buf.Bytes(), mw.FormDataContentType())
	if err != nil || code/100 != 2 {
		t.Fatalf("upload on box %d: %d %s %v", b.i, code, body, err)
	}
	return id
}

// TestHouseholdOfThree (make test-household): three boxes pair through
// their admin APIs, each finding the others by mDNS and each pairing
// accepted on the other box; an upload on B is listed and plays on A and
// C; a card taught on A plays on B and C, put on their card readers; a
// station added on C appears everywhere; the same card changed on A and B
// while apart converges; B's link is cut during a 100 MB transfer and
// restored (largeTransfer); C's media disk fills up during a sync
// (mediaDiskFull); a folder deleted on A is gone everywhere; a fourth box,
// unpaired (its own request never accepted), gets nothing; a box removed
// from the household has its later changes refused.
func TestHouseholdOfThree(t *testing.T) {
	hhnet.Wanted(t)
	n := hhnet.New(t)
	bins := householdBins(t)
	var boxes []*nsBox
	for i := 1; i <= 4; i++ {
		var disk int64
		if i == 3 {
			disk = cMediaDisk
		}
		boxes = append(boxes, startNSBox(t, n, i, bins, disk))
	}
	a, b, c, d := boxes[0], boxes[1], boxes[2], boxes[3]
	for _, x := range boxes {
		if st := x.household(); st["state"] != "alone" {
			t.Fatalf("box %d before pairing: %v", x.i, st["state"])
		}
	}
	start := time.Now()
	pair(t, a, b)
	pair(t, a, c)
	pair(t, b, c)
	// The fourth box asks A; nobody accepts.
	waitFound(d, a)
	d.ok("POST", "/api/admin/household/boxes", `{"device_id":"`+a.deviceID+`"}`)
	for _, x := range boxes[:3] {
		x.waitFor(90*time.Second, "connected to both others", connected(x, 2))
	}
	t.Logf("paired and connected in %s", time.Since(start).Round(time.Millisecond))

	// An upload on B plays on A and C.
	start = time.Now()
	song := testmedia.Tone(2, 44100, 440)
	upload(t, b, "Lieder", "01 Lied.wav", song)
	for _, x := range []*nsBox{a, c} {
		x.waitFor(90*time.Second, "B's upload listed", func() bool { return tracks(x.folder("Lieder")) == 1 })
	}
	t.Logf("an upload of %d bytes listed on the other boxes after %s", len(song), time.Since(start).Round(time.Millisecond))
	id := library.ID("Lieder")
	st := c.ok("POST", "/api/command", `{"action":"folder","folder_id":"`+id+`"}`)
	if st["state"] != "playing" {
		t.Errorf("C plays B's upload: %v", st["state"])
	}
	c.ok("POST", "/api/command", `{"action":"stop"}`)

	// A card taught on A is known on B and C; a station added on C
	// appears on A and B.
	start = time.Now()
	a.ok("PUT", "/api/admin/cards/0004921380", `{"action":"folder","folder_id":"`+id+`","name":"Lied"}`)
	for _, x := range []*nsBox{b, c} {
		x.waitFor(90*time.Second, "A's card", func() bool { return cardName(x, "0004921380") == "Lied" })
	}
	t.Logf("a card taught on A known on B and C after %s", time.Since(start).Round(time.Millisecond))
	// ... and plays there: put on B's and C's card readers, it plays the
	// folder it names on each.
	for _, x := range []*nsBox{b, c} {
		x.present("0004921380")
		x.plays(id)
		x.ok("POST", "/api/command", `{"action":"stop"}`)
	}
	c.ok("POST", "/api/admin/stations", `{"name":"Kinderfunk","url":"https://radio.example/kids.mp3"}`)
	for _, x := range []*nsBox{a, b} {
		x.waitFor(90*time.Second, "C's station", func() bool { return hasStation(x, "Kinderfunk") })
	}

	// The same card changed on A and on B while B is cut off converges to
	// one value everywhere, and no conflict file is left.
	if err := n.Link(b.i, false); err != nil {
		t.Fatal(err)
	}
	a.ok("PUT", "/api/admin/cards/0004921380", `{"action":"folder","folder_id":"`+id+`","name":"von A"}`)
	b.ok("PUT", "/api/admin/cards/0004921380", `{"action":"folder","folder_id":"`+id+`","name":"von B"}`)
	if err := n.Link(b.i, true); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	var agreed string
	a.waitFor(120*time.Second, "the card's two versions converged with no conflict file", func() bool {
		names := map[string]bool{}
		for _, x := range []*nsBox{a, b, c} {
			names[cardName(x, "0004921380")] = true
			if conflicts(filepath.Join(x.dir, "data", "household")) > 0 {
				return false
			}
		}
		for k := range names {
			agreed = k
		}
		return len(names) == 1 && (agreed == "von A" || agreed == "von B")
	})
	t.Logf("the card changed on A and B while apart is %q everywhere, %.1fs after B's link came back", agreed, time.Since(back).Seconds())

	// B's link cut during a 100 MB transfer and restored, C's playerd
	// killed mid-transfer; then C's media disk fills up.
	largeTransfer(t, n, a, b, c)
	mediaDiskFull(t, a, b, c, id)

	// A folder deleted on A is gone everywhere.
	a.ok("DELETE", "/api/admin/library/folders/"+id, "")
	for _, x := range []*nsBox{b, c} {
		x.waitFor(90*time.Second, "A's deletion", func() bool { return x.folder("Lieder") == nil && gone(filepath.Join(x.media, "Lieder")) })
	}

	// C is removed on A and B; what C changes later reaches neither.
	for _, x := range []*nsBox{a, b} {
		x.ok("DELETE", "/api/admin/household/boxes/"+c.deviceID, "")
	}
	putFile(t, filepath.Join(c.media, "Nur C", "c.wav"), song)
	putFile(t, filepath.Join(b.media, "Von B", "b.wav"), song)
	// A and B start Syncthing again with C gone, at about the same time:
	// each one's first dial can find the other still starting, and
	// Syncthing dials an address again only a minute later.
	a.waitFor(180*time.Second, "B's later file", func() bool { return tracks(a.folder("Von B")) == 1 })
	if !gone(filepath.Join(a.media, "Nur C")) || !gone(filepath.Join(b.media, "Nur C")) {
		t.Error("a removed box's change arrived")
	}
	// The fourth box never got anything, nor gave.
	if ents, _ := os.ReadDir(d.media); len(visible(ents)) != 0 {
		t.Errorf("the unpaired box got %v", visible(ents))
	}
	if st := a.household(); len(st["requests"].([]any)) != 1 {
		t.Errorf("the fourth box's request is not waiting on A: %v", st["requests"])
	}
}

func cardName(b *nsBox, card string) string {
	v, err := b.get("/api/admin/cards")
	if err != nil {
		return ""
	}
	cards, _ := v.(map[string]any)["cards"].(map[string]any)
	m, _ := cards[card].(map[string]any)
	name, _ := m["name"].(string)
	return name
}

func hasStation(b *nsBox, name string) bool {
	v, err := b.get("/api/admin/stations")
	if err != nil {
		return false
	}
	list, _ := v.(map[string]any)["stations"].([]any)
	for _, s := range list {
		if s.(map[string]any)["name"] == name {
			return true
		}
	}
	return false
}

// conflicts counts Syncthing's conflict files below dir.
func conflicts(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".sync-conflict-") {
			n++
		}
		return nil
	})
	return n
}

func visible(ents []os.DirEntry) []string {
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

func putFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func gone(path string) bool {
	_, err := os.Stat(path)
	return os.IsNotExist(err)
}
