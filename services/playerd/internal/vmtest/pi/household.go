package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/syncapi"
)

// The household figures (make figures-household-pi, docs/household.md):
// Syncthing on the board with the 10,000-track library, idle, hashing the
// library shared for the first time and sending it to a second box. The
// second box is a syncd with Syncthing on this machine, run by this
// program inside the network namespace make made for it, where the only
// interface is loopback: it reaches the board's Syncthing through a qemu
// forward on that loopback. Syncthing never runs on this machine's own
// network.

// peer is the second box: syncd (with its Syncthing) on this machine.
type peer struct {
	dir, media string
	cmd        *exec.Cmd
	done       chan struct{}
	client     *daemon.Client
	log        bytes.Buffer
	mu         sync.Mutex
}

func (p *peer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Write(b)
}

// onlyLoopback refuses to run anywhere but in a namespace whose one
// interface is loopback.
func onlyLoopback() error {
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			return fmt.Errorf("the network has %s: run the household figures in a network namespace of their own (make figures-household-pi does)", i.Name)
		}
	}
	return nil
}

func startPeer(c config, work string) (*peer, error) {
	gui, err1 := freePort()
	port, err2 := freePort()
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("no free ports: %v %v", err1, err2)
	}
	dir := filepath.Join(work, "peer")
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	p := &peer{dir: dir, media: filepath.Join(dir, "media"), done: make(chan struct{})}
	household := filepath.Join(dir, "data", "household")
	for _, d := range []string{p.media, household} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	sock := filepath.Join(dir, "syncd.sock")
	p.cmd = exec.Command(c.peerSyncd, "-socket", sock, "-state", filepath.Join(dir, "state"), "-syncthing", c.peerSyncthing,
		"-household", household, "-media", p.media, "-name", "peer", "-browse=false",
		"-gui", fmt.Sprintf("127.0.0.1:%d", gui), "-port", fmt.Sprint(port))
	p.cmd.Stdout, p.cmd.Stderr = p, p
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	p.client = daemon.NewClient(sock, "syncd", "the peer's syncd does not answer")
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := p.status()
		if err == nil && st.DeviceID != "" {
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("the peer's syncd exited: %s", p.log.String())
		default:
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("the peer's syncd: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *peer) status() (syncapi.Status, error) {
	var st syncapi.Status
	err := p.client.Call(context.Background(), http.MethodGet, "/status", nil, &st)
	return st, err
}

func (p *peer) stop() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// follower keeps the probe's samples as gokrazy streams its log.
type follower struct {
	mu      sync.Mutex
	samples []sample
	changed chan struct{} // closed and replaced at each new sample
}

func (s *session) follow(ctx context.Context) *follower {
	f := &follower{changed: make(chan struct{})}
	go func() {
		for ctx.Err() == nil {
			f.read(ctx, s.box)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return f
}

func (f *follower) read(ctx context.Context, b *box) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.ui+"/log?path=/user/storybox-probe&stream=stderr", nil)
	if err != nil {
		return
	}
	req.SetBasicAuth("gokrazy", b.password)
	resp, err := b.uiTransport.RoundTrip(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		for _, x := range parseSamples(sc.Text()) {
			f.mu.Lock()
			if n := len(f.samples); n == 0 || x.ms > f.samples[n-1].ms {
				f.samples = append(f.samples, x)
				close(f.changed)
				f.changed = make(chan struct{})
			}
			f.mu.Unlock()
		}
	}
}

// mark waits for the next sample and returns its index: a phase's edge.
func (f *follower) mark() (int, error) {
	f.mu.Lock()
	n, ch := len(f.samples), f.changed
	f.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(3 * time.Minute):
		return 0, fmt.Errorf("the probe on the board printed nothing for 3 minutes")
	}
	return n, nil
}

func (f *follower) span(from, to int) []sample {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sample(nil), f.samples[from:to+1]...)
}

func (f *follower) last() (sample, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.samples) == 0 {
		return sample{}, false
	}
	return f.samples[len(f.samples)-1], true
}

// gokrazy sends a request to gokrazy's web interface (its update API).
func (b *box) gokrazy(method, path, contentType string, body []byte) error {
	req, err := http.NewRequest(method, b.ui+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth("gokrazy", b.password)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := (&http.Client{Transport: b.uiTransport, Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("gokrazy %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// householdView is what the figures read of GET /api/admin/household.
type householdView struct {
	DeviceID string `json:"device_id"`
	State    string `json:"state"`
	Boxes    []struct {
		DeviceID   string  `json:"device_id"`
		Connected  bool    `json:"connected"`
		Completion float64 `json:"completion"`
	} `json:"boxes"`
	Folders []struct {
		ID          string `json:"id"`
		State       string `json:"state"`
		GlobalBytes int64  `json:"global_bytes"`
	} `json:"folders"`
}

// householdFigures measures Syncthing on the board: alone, hashing the
// library once a second box is added, sending it, and idle after.
func (s *session) householdFigures() error {
	if err := onlyLoopback(); err != nil {
		return err
	}
	tiny, err := os.Stat(filepath.Join(s.work, "tiny.wav"))
	if err != nil {
		return err
	}
	libraryBytes := int64(libraryTracks) * tiny.Size()
	// What else ran on the board while the library was scanned (syncd
	// making its keys, playerd's scan as it timed it itself).
	for _, svc := range []string{"syncd", "playerd"} {
		for _, l := range strings.Split(s.box.serviceLog(svc), "\n") {
			if svc == "syncd" || strings.Contains(l, "library scanned") || strings.Contains(l, "loudness") {
				say("household: %s: %s", svc, l)
			}
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := s.follow(ctx)
	// The probe came on the card (probeOnPerm), as the library did: an
	// upload through gokrazy's /uploadtemp of its 10 MB over the emulated
	// USB Ethernet timed out under TCG on a loaded machine. gokrazy takes
	// a diversion relative to its temporary directory (/tmp).
	div, err := json.Marshal(map[string]any{"Path": "/user/storybox-probe", "Diversion": "../" + probeOnPerm, "Flags": []string{"-probe"}})
	if err != nil {
		return err
	}
	if err := s.box.gokrazy("POST", "/divert", "application/json", div); err != nil {
		return err
	}
	if _, err := f.mark(); err != nil {
		return err
	}
	if x, _ := f.last(); x.pid != 0 {
		return fmt.Errorf("a box alone runs Syncthing (pid %d)", x.pid)
	}
	say("household: alone, the board runs no Syncthing (probe at %.1f s after power-on)", s.since().Seconds())

	p, err := startPeer(s.c, s.work)
	if err != nil {
		return err
	}
	defer p.stop()
	pst, _ := p.status()
	var hv householdView
	if err := s.box.get("/api/admin/household", &hv); err != nil {
		return err
	}
	// The peer asks as a box does (POST /api/household/requests) and a
	// parent accepts on the board; the board hashes its library then.
	// The peer adds the board only after that, so hashing and sending are
	// measured apart.
	if err := s.box.call("POST", "/api/household/requests", map[string]any{"device_id": pst.DeviceID, "name": "peer", "port": pst.Port}, nil); err != nil {
		return err
	}
	if err := s.box.call("POST", "/api/admin/household/requests/"+pst.DeviceID+"/accept", nil, nil); err != nil {
		return err
	}
	accepted := time.Now()
	var hashFrom int
	err = s.m.waitFor("Syncthing started on the board", 20*time.Minute, time.Second, func() (bool, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, x := range f.samples {
			if x.pid != 0 {
				hashFrom = i
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	err = s.m.waitFor("the board's library hashed", 60*time.Minute, 2*time.Second, func() (bool, error) {
		if err := s.box.get("/api/admin/household", &hv); err != nil {
			return false, nil // TCG: an answer may time out while Syncthing hashes
		}
		for _, fo := range hv.Folders {
			if fo.ID == syncapi.MediaFolder {
				return hv.State == syncapi.StateRunning && fo.State == "idle" && fo.GlobalBytes >= libraryBytes, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	hashTo, err := f.mark()
	if err != nil {
		return err
	}
	hashing := spanUsage(f.span(hashFrom, hashTo))
	say("household: hashing the %d-track library (%d MB) on the board: %.0f s after the accept; Syncthing peak RSS %.1f MB, %.0f %% of a core over %.0f s",
		libraryTracks, libraryBytes/1e6, time.Since(accepted).Seconds(), float64(hashing.peakKiB)*1024/1e6, hashing.core*100, hashing.seconds)

	vmAddr := fmt.Sprintf("tcp://127.0.0.1:%d", s.syncPort)
	sendFrom, err := f.mark()
	if err != nil {
		return err
	}
	added := time.Now()
	if err := p.client.Call(context.Background(), http.MethodPost, "/boxes", syncapi.AddBox{DeviceID: hv.DeviceID, Name: "storybox", Address: vmAddr}, nil); err != nil {
		return fmt.Errorf("the peer adds the board: %v", err)
	}
	err = s.m.waitFor("the library on the peer", 60*time.Minute, 2*time.Second, func() (bool, error) {
		st, err := p.status()
		if err != nil || len(st.Boxes) != 1 || !st.Boxes[0].Connected {
			return false, nil
		}
		for _, fo := range st.Folders {
			if fo.ID == syncapi.MediaFolder && (fo.State != "idle" || fo.NeedFiles > 0 || fo.GlobalBytes < libraryBytes) {
				return false, nil
			}
		}
		return countFiles(p.media) >= libraryTracks, nil
	})
	if err != nil {
		return err
	}
	sendTo, err := f.mark()
	if err != nil {
		return err
	}
	sending := spanUsage(f.span(sendFrom, sendTo))
	say("household: the library sent to the peer (%d files there): %.0f s after the peer added the board; the board's Syncthing peak RSS %.1f MB, %.0f %% of a core over %.0f s",
		countFiles(p.media), time.Since(added).Seconds(), float64(sending.peakKiB)*1024/1e6, sending.core*100, sending.seconds)

	idleFrom := sendTo
	time.Sleep(idleSpan) // the span measured, not a wait for an event
	idleTo, err := f.mark()
	if err != nil {
		return err
	}
	idle := spanUsage(f.span(idleFrom, idleTo))
	say("household: idle afterwards, %d files shared: the board's Syncthing RSS %.1f MB (peak %.1f MB), %.1f %% of a core over %.0f s",
		countFiles(p.media), float64(idle.lastKiB)*1024/1e6, float64(idle.peakKiB)*1024/1e6, idle.core*100, idle.seconds)
	// The board's admin view must still show the peer connected. Under
	// TCG an answer can miss playerd's 10 s bound to syncd (a run ended
	// on one 503 here), so a miss is counted and said, and asked again.
	var misses int
	var missed error
	err = s.m.waitFor("the peer connected in the board's admin view", 5*time.Minute, 2*time.Second, func() (bool, error) {
		if err := s.box.get("/api/admin/household", &hv); err != nil {
			misses, missed = misses+1, err
			return false, nil
		}
		return len(hv.Boxes) == 1 && hv.Boxes[0].Connected, nil
	})
	if misses > 0 {
		say("household: the board's admin view missed %d answer(s) before this one (last: %v); syncd's log:\n%s", misses, missed, lastLines(s.box.serviceLog("syncd"), 20))
	}
	if err != nil {
		return fmt.Errorf("%w: %+v", err, hv.Boxes)
	}
	mem, err := s.box.memory()
	if err == nil {
		say("household: the board's memory then: MemTotal %.0f MB, MemAvailable %.0f MB; syncd RSS %.1f MB, playerd %.1f MB",
			float64(mem.total)/1e6, float64(mem.available)/1e6, float64(mem.rss["/user/syncd"])/1e6, float64(mem.rss["/user/playerd"])/1e6)
	}
	return nil
}

// probeOnPerm is where the probe is put on the card: /perm/storybox-probe.
const probeOnPerm = "perm/storybox-probe/probe"

// idleSpan is how long Syncthing is watched with nothing to do.
const idleSpan = time.Minute

func countFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}
