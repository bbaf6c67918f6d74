package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// proc is a running playerd.
type proc struct {
	cmd     *exec.Cmd
	base    string
	wav     string
	t0      time.Time
	ready   time.Duration // start → first answer of /api/health
	scanned time.Duration // start → first scan complete
	c       *http.Client
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// wavPath puts the output file in memory where it can, so the disk and the
// kernel's writeback stay out of the figures: a box writes to ALSA, and MPD
// here to its null output.
func wavPath(dir string) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "perfbench"); err == nil {
			return filepath.Join(d, "out.wav")
		}
	}
	return filepath.Join(dir, "out.wav")
}

// startPlayerd starts playerd on a fresh data directory (no scan cache) and
// returns once its API answers. With wav its output is a paced WAV file (for
// the first-sample figure, read from the file), else the null output: a
// modelled device with the ALSA sink's buffer, filled in batches as a device
// is, without a file written per period; MPD's figures are on its null output
// too.
func startPlayerd(bin, dir, media string, wav bool) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &proc{base: fmt.Sprintf("http://127.0.0.1:%d", port), c: &http.Client{Timeout: 10 * time.Second}}
	out := "null"
	if wav {
		p.wav = wavPath(dir)
		out = "wav:" + p.wav
	}
	p.cmd = exec.Command(bin, "-listen", fmt.Sprintf("127.0.0.1:%d", port), "-media", media,
		"-data", filepath.Join(dir, "data"), "-output", out, "-fb", "none", "-console", "",
		"-touch", "none", "-input", "none", "-ha-listen", "", "-ha-mdns=false", "-speech-program", filepath.Join(dir, "none"))
	p.cmd.Stderr = io.Discard
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p.t0 = time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	for {
		if _, err := p.get("/api/health"); err == nil {
			p.ready = time.Since(p.t0)
			return p, nil
		}
		if time.Since(p.t0) > 60*time.Second {
			p.stop()
			return nil, errors.New("playerd did not answer /api/health within 60 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// waitScanned waits for the first scan, which runs behind the API.
func (p *proc) waitScanned() error {
	for {
		b, err := p.get("/api/info")
		if err != nil {
			return err
		}
		var info struct {
			Library struct{ Scanned bool }
		}
		if err := json.Unmarshal(b, &info); err != nil {
			return err
		}
		if info.Library.Scanned {
			p.scanned = time.Since(p.t0)
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (p *proc) stop() {
	defer func() {
		if strings.HasPrefix(p.wav, "/dev/shm/") {
			os.RemoveAll(filepath.Dir(p.wav))
		}
	}()
	stopProcess(p.cmd)
}

// stopProcess interrupts a started program and waits for it, killing it
// after 10 s.
func stopProcess(cmd *exec.Cmd) {
	cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

func (p *proc) get(path string) ([]byte, error) {
	return answer(p.c.Get(p.base + path))
}

func (p *proc) command(body string) ([]byte, error) {
	b, err := answer(p.c.Post(p.base+"/api/command", "application/json", strings.NewReader(body)))
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", body, err)
	}
	return b, nil
}

// answer reads a response's body; anything but 200 is an error.
func answer(resp *http.Response, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("%s %s: %s: %s", resp.Request.Method, resp.Request.URL.Path, resp.Status, b)
	}
	return b, err
}

// folders maps each format to its folder id; in the scan library the
// playing folders are named zz-bench-FORMAT.
func (p *proc) folders() (map[string]string, error) {
	b, err := p.get("/api/library")
	if err != nil {
		return nil, err
	}
	var lib []struct{ ID, Name string }
	if err := json.Unmarshal(b, &lib); err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, f := range lib {
		ids[strings.TrimPrefix(f.Name, "zz-bench-")] = f.ID
	}
	for _, f := range formats {
		if ids[f] == "" {
			return nil, fmt.Errorf("folder %s not in the library", f)
		}
	}
	return ids, nil
}

// playToEnd sends a play command and returns when the player has played
// and stopped, told by the event stream: polling the status would add a
// request's cost per poll to the figure being measured (MPD is waited for
// with its idle command for the same reason).
func (p *proc) playToEnd(cmd string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", p.base+"/api/events", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET /api/events: %s", resp.Status)
	}
	states := make(chan string)
	go func() {
		defer close(states)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				event = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok && (event == "status" || event == "state") {
				var st struct{ State string }
				if json.Unmarshal([]byte(v), &st) == nil {
					select {
					case states <- st.State:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	// The stream starts with the whole status, then a state event at each
	// change of the player's state.
	if _, ok := <-states; !ok {
		return fmt.Errorf("event stream ended before its first status")
	}
	if _, err := p.command(cmd); err != nil {
		return err
	}
	played := false
	for st := range states {
		played = played || st == "playing"
		if played && st == "stopped" {
			return nil
		}
	}
	return fmt.Errorf("%s: not played to its end within %v", cmd, limit)
}

// firstSample stops, notes how many frames the wav holds, sends the folder
// command and watches the file for the first non-silent frame after that.
func (p *proc) firstSample(id string) (time.Duration, error) {
	if _, err := p.command(`{"action":"stop"}`); err != nil {
		return 0, err
	}
	time.Sleep(500 * time.Millisecond)
	fi, err := os.Stat(p.wav)
	if err != nil {
		return 0, err
	}
	from := fi.Size()
	t0 := time.Now()
	if _, err := p.command(fmt.Sprintf(`{"action":"folder","folder_id":%q}`, id)); err != nil {
		return 0, err
	}
	f, err := os.Open(p.wav)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for time.Since(t0) < 5*time.Second {
		n, _ := f.ReadAt(buf, from)
		n -= n % 4
		for i := 0; i < n; i += 4 {
			if binary.LittleEndian.Uint16(buf[i:]) != 0 || binary.LittleEndian.Uint16(buf[i+2:]) != 0 {
				return time.Since(t0), nil
			}
		}
		from += int64(n)
		time.Sleep(200 * time.Microsecond)
	}
	return 0, errors.New("no audible sample within 5 s")
}

func (p *proc) cpu() float64 { return cpuSeconds(p.cmd.Process.Pid) }

// settle waits until the process is idle (under 10 ms of CPU in a second),
// at most 60 s: after a first scan of 10,000 tracks the runtime collects
// and returns the scan's memory for a while, which is not playing's cost.
func settle(pid int) {
	prev := cpuSeconds(pid)
	for range 60 {
		time.Sleep(time.Second)
		now := cpuSeconds(pid)
		if now-prev < 0.01 {
			return
		}
		prev = now
	}
}

// cpuSeconds is a process's user and system time so far.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// anonymousRSS is a process's anonymous resident memory in bytes: its heap and
// stacks, what it costs beyond its mapped binary, shared libraries and the
// page cache.
func anonymousRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	var sum float64
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Anonymous:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			sum += kb * 1000
		}
	}
	return sum
}
