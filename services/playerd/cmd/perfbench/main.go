// perfbench measures a real playerd process the way issue 21 states its
// figures: CPU seconds per audio second while playing MP3, FLAC and Vorbis
// into a paced wav output, time to /api/health, server CPU per GET
// /api/status, folder command → first audible sample in the output file, and
// idle private RSS. CPU comes from /proc/PID/stat (utime+stime), so the
// figures are the whole process's, not the decoder's.
//
//	go build -o /tmp/playerd ./services/playerd
//	go run ./services/playerd/cmd/perfbench -playerd /tmp/playerd
//
// The test tracks are made with sox, lame, flac and oggenc (Debian packages
// sox, lame, flac, vorbis-tools).
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
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

func main() {
	bin := flag.String("playerd", "", "the playerd binary to measure")
	seconds := flag.Int("seconds", 20, "length of each test track")
	statusN := flag.Int("status", 3000, "GET /api/status requests for the status figure")
	firstN := flag.Int("first", 5, "folder commands for the first-sample figure")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "usage: perfbench -playerd BIN [-seconds N]")
		os.Exit(2)
	}
	if err := run(*bin, *seconds, *statusN, *firstN); err != nil {
		fmt.Fprintln(os.Stderr, "perfbench:", err)
		os.Exit(1)
	}
}

var formats = []string{"mp3", "flac", "ogg"}

func run(bin string, seconds, statusN, firstN int) error {
	dir, err := os.MkdirTemp("", "perfbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	media := filepath.Join(dir, "media")
	if err := makeMedia(media, seconds); err != nil {
		return err
	}
	p, err := start(bin, dir, media)
	if err != nil {
		return err
	}
	defer p.stop()
	fmt.Printf("time to /api/health: %.1f ms\n", p.ready.Seconds()*1000)

	ids, err := p.folders()
	if err != nil {
		return err
	}
	for _, f := range formats {
		if _, err := p.command(`{"action":"stop"}`); err != nil {
			return err
		}
		c0 := p.cpu()
		if _, err := p.command(fmt.Sprintf(`{"action":"folder","folder_id":%q}`, ids[f])); err != nil {
			return err
		}
		if err := p.waitState("stopped", time.Duration(seconds+30)*time.Second); err != nil {
			return err
		}
		cpu := p.cpu() - c0
		fmt.Printf("CPU per audio second, %s: %.4f s/s (%.2f s CPU for %d s)\n", f, cpu/float64(seconds), cpu, seconds)
	}

	c0 := p.cpu()
	for range statusN {
		if _, err := p.get("/api/status"); err != nil {
			return err
		}
	}
	fmt.Printf("server CPU per GET /api/status: %.1f µs (%d requests, keep-alive)\n", (p.cpu()-c0)/float64(statusN)*1e6, statusN)

	var lat []string
	for range firstN {
		d, err := p.firstSample(ids["flac"])
		if err != nil {
			return err
		}
		lat = append(lat, fmt.Sprintf("%.1f", d.Seconds()*1000))
	}
	fmt.Printf("folder command → first audible sample in the wav: %s ms\n", strings.Join(lat, " / "))
	if _, err := p.command(`{"action":"stop"}`); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	fmt.Printf("idle private RSS: %.1f MB\n", p.privateRSS()/1e6)
	return nil
}

func makeMedia(media string, seconds int) error {
	wav := filepath.Join(media, "src.wav")
	if err := os.MkdirAll(media, 0o755); err != nil {
		return err
	}
	// Music-like: two voices and some noise, so the encoders do real work.
	if err := sh("sox", "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", strconv.Itoa(seconds),
		"sine", "220-880", "sine", "330-660", "pinknoise", "remix", "1,2,3", "1,2,3", "gain", "-10"); err != nil {
		return err
	}
	for _, f := range formats {
		d := filepath.Join(media, f)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		out := filepath.Join(d, "01 track."+f)
		var err error
		switch f {
		case "mp3":
			err = sh("lame", "--quiet", "-b", "128", "--tt", "Track", "--ta", "Artist", wav, out)
		case "flac":
			err = sh("flac", "--silent", "-o", out, wav)
		case "ogg":
			err = sh("oggenc", "--quiet", "-q", "4", "-t", "Track", "-o", out, wav)
		}
		if err != nil {
			return err
		}
	}
	return os.Remove(wav)
}

func sh(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, out)
	}
	return nil
}

type proc struct {
	cmd   *exec.Cmd
	base  string
	wav   string
	ready time.Duration
	c     *http.Client
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(bin, dir, media string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &proc{base: fmt.Sprintf("http://127.0.0.1:%d", port), wav: filepath.Join(dir, "out.wav"), c: &http.Client{Timeout: 10 * time.Second}}
	p.cmd = exec.Command(bin, "-listen", fmt.Sprintf("127.0.0.1:%d", port), "-media", media,
		"-data", filepath.Join(dir, "data"), "-output", "wav:"+p.wav, "-fb", "none", "-console", "",
		"-touch", "none", "-input", "none", "-ha-listen", "", "-ha-mdns=false", "-speech-program", filepath.Join(dir, "none"))
	p.cmd.Stderr = io.Discard
	t0 := time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	for {
		if _, err := p.get("/api/health"); err == nil {
			p.ready = time.Since(t0)
			break
		}
		if time.Since(t0) > 60*time.Second {
			p.stop()
			return nil, errors.New("playerd did not answer /api/health within 60 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	// The first scan runs behind the API; the figures want it done.
	for {
		b, err := p.get("/api/info")
		if err != nil {
			return nil, err
		}
		var info struct {
			Library struct{ Scanned bool }
		}
		if err := json.Unmarshal(b, &info); err != nil {
			return nil, err
		}
		if info.Library.Scanned {
			return p, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *proc) stop() {
	p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

func (p *proc) get(path string) ([]byte, error) {
	resp, err := p.c.Get(p.base + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return b, err
}

func (p *proc) command(body string) ([]byte, error) {
	resp, err := p.c.Post(p.base+"/api/command", "application/json", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("command %s: %s: %s", body, resp.Status, b)
	}
	return b, err
}

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
		ids[f.Name] = f.ID
	}
	for _, f := range formats {
		if ids[f] == "" {
			return nil, fmt.Errorf("folder %s not in the library", f)
		}
	}
	return ids, nil
}

func (p *proc) waitState(state string, limit time.Duration) error {
	t0 := time.Now()
	for time.Since(t0) < limit {
		b, err := p.get("/api/status")
		if err != nil {
			return err
		}
		var s struct{ State string }
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s.State == state {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("state %s not reached within %v", state, limit)
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

func (p *proc) cpu() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

func (p *proc) privateRSS() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	var sum float64
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Private_Clean:") || strings.HasPrefix(l, "Private_Dirty:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			sum += kb * 1000
		}
	}
	return sum
}
