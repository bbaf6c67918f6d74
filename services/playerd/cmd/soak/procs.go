package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one run of a daemon, ended by SIGKILL (or on its own).
type process struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // once exited
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// running tells whether the process has not exited.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

func startProcess(name string, log *logWatcher, args ...string) (*process, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// daemons are the box: playerd with hatd and netd, as gokrazy runs them,
// in a work directory of their own.
type daemons struct {
	cfg              config
	media, data, run string // the box's media library, /perm/playerd, the sockets
	netdState        string
	netns            string // netd's network namespace
	port, haPort     int
	base, haBase     string // http://127.0.0.1:port, https://127.0.0.1:haPort

	logs map[string]*logWatcher

	mu      sync.Mutex
	playerd *process
	hatd    *process
	netd    *process
	life    int // how many times playerd was started
	started time.Time
}

func newDaemons(cfg config, work, run string) (*daemons, error) {
	d := &daemons{cfg: cfg, media: filepath.Join(work, "media"), data: filepath.Join(work, "data"), run: run,
		netdState: filepath.Join(work, "netd"), logs: map[string]*logWatcher{}}
	for _, dir := range []string{d.media, d.data, d.netdState} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	var err error
	if d.port, err = freePort(); err != nil {
		return nil, err
	}
	if d.haPort, err = freePort(); err != nil {
		return nil, err
	}
	d.base = fmt.Sprintf("http://127.0.0.1:%d", d.port)
	d.haBase = fmt.Sprintf("https://127.0.0.1:%d/api/ha/v1", d.haPort)
	for _, name := range []string{"playerd", "hatd", "netd"} {
		if d.logs[name], err = newLogWatcher(filepath.Join(cfg.out, name+".log")); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// freePort is a port nobody listens on now; playerd keeps it across its
// restarts, as the box keeps :8090.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (d *daemons) hatdSocket() string    { return filepath.Join(d.run, "hatd.sock") }
func (d *daemons) netdSocket() string    { return filepath.Join(d.run, "netd.sock") }
func (d *daemons) controlSocket() string { return filepath.Join(d.run, "control.sock") }

func (d *daemons) startHatd() error {
	p, err := startProcess("hatd", d.logs["hatd"], d.cfg.hatd, "-sim", "-socket", d.hatdSocket())
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.hatd = p
	d.mu.Unlock()
	return nil
}

// startNetd runs netd in a network namespace with only loopback: it finds
// no Wi-Fi there and serves its socket (no_adapter), and cannot touch this
// machine's network.
func (d *daemons) startNetd() error {
	p, err := startProcess("netd", d.logs["netd"], "ip", "netns", "exec", d.netns, d.cfg.netd,
		"-socket", d.netdSocket(), "-state", d.netdState, "-mdns=false", "-hostname", "soakbox")
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.netd = p
	d.mu.Unlock()
	return nil
}

// startPlayerd starts a new life of playerd and waits until its API and
// the home-automation API are ready.
func (d *daemons) startPlayerd(ctx context.Context) error {
	d.mu.Lock()
	d.life++
	life := d.life
	d.mu.Unlock()
	log := d.logs["playerd"]
	ready := log.expect(`msg="playerd ready"`, `msg="home-automation API ready"`)
	args := []string{d.cfg.playerd,
		"-listen", fmt.Sprintf("127.0.0.1:%d", d.port), "-ha-listen", fmt.Sprintf("127.0.0.1:%d", d.haPort), "-ha-mdns=false",
		"-media", d.media, "-data", d.data, "-output", "null", "-hat", d.hatdSocket(), "-net", d.netdSocket(),
		"-fb", "none", "-touch", "none", "-console", "", "-input", "auto", "-hostname", "soakbox",
		"-admin-reset-file", filepath.Join(d.run, "boot", "storybox-reset-password.txt")}
	if d.cfg.speech != "" {
		args = append(args, "-speech-program", filepath.Join(d.cfg.speech, "storybox-speak"), "-speech-data", filepath.Join(d.cfg.speech, "data"))
	} else {
		args = append(args, "-speech-program", filepath.Join(d.run, "no-voice"))
	}
	log.mark(fmt.Sprintf("life %d", life))
	cmd := exec.Command(args[0], args[1:]...)
	// The image's environment for playerd (gokrazy-instance/storybox/config.json).
	cmd.Env = append(os.Environ(), "STORYBOX_SOAK_CONTROL="+d.controlSocket(), "GOMEMLIMIT="+d.cfg.memLimit)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start playerd: %w", err)
	}
	p := &process{name: "playerd", cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	d.mu.Lock()
	d.playerd, d.started = p, time.Now()
	d.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-p.exited:
		return fmt.Errorf("playerd exited before it was ready: %v (playerd.log)", p.err)
	case <-time.After(60 * time.Second):
		return errors.New("playerd not ready within 60 s (playerd.log)")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// current is playerd's running process and its life.
func (d *daemons) current() (*process, int, time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.playerd, d.life, d.started
}

func (d *daemons) stopAll() {
	d.mu.Lock()
	ps := []*process{d.playerd, d.hatd, d.netd}
	d.mu.Unlock()
	for _, p := range ps {
		if p != nil {
			p.kill()
		}
	}
	for _, l := range d.logs {
		l.close()
	}
}

// logWatcher is a daemon's stderr: written to its file, counted by level
// and message for the report, and watched for lines a start waits for.
type logWatcher struct {
	mu      sync.Mutex
	f       *os.File
	partial []byte
	lines   int
	counts  map[string]int // "LEVEL msg" -> lines
	waits   []*logWait
}

type logWait struct {
	want []string // substrings, each to be seen once
	done chan struct{}
}

func newLogWatcher(path string) (*logWatcher, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &logWatcher{f: f, counts: map[string]int{}}, nil
}

var (
	levelRe = regexp.MustCompile(`level=(\w+)`)
	msgRe   = regexp.MustCompile(`msg=("(?:[^"\\]|\\.)*"|\S+)`)
)

func (l *logWatcher) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.f.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.line(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

func (l *logWatcher) line(s string) {
	l.lines++
	level, msg := "?", s
	if m := levelRe.FindStringSubmatch(s); m != nil {
		level = m[1]
	}
	if m := msgRe.FindStringSubmatch(s); m != nil {
		msg = strings.Trim(m[1], `"`)
	}
	l.counts[level+" "+msg]++
	for _, w := range l.waits {
		for i, want := range w.want {
			if strings.Contains(s, want) {
				w.want = append(w.want[:i], w.want[i+1:]...)
				break
			}
		}
		if len(w.want) == 0 {
			close(w.done)
		}
	}
	kept := l.waits[:0]
	for _, w := range l.waits {
		if len(w.want) > 0 {
			kept = append(kept, w)
		}
	}
	l.waits = kept
}

// expect returns a channel closed once a line containing each of want has
// been written (after this call).
func (l *logWatcher) expect(want ...string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := &logWait{want: append([]string(nil), want...), done: make(chan struct{})}
	l.waits = append(l.waits, w)
	return w.done
}

// mark writes a line of the soak's own into the log file.
func (l *logWatcher) mark(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.f, "=== soak: %s at %s\n", what, time.Now().UTC().Format(time.RFC3339Nano))
}

// summary is the log's lines by level and message, most frequent first.
func (l *logWatcher) summary() (total int, top []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range l.counts {
		all = append(all, kv{k, n})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || all[i].n == all[j].n && all[i].k < all[j].k })
	for _, e := range all {
		top = append(top, strconv.Itoa(e.n)+" × "+e.k)
	}
	return l.lines, top
}

func (l *logWatcher) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.f.Close()
}

func (d *daemons) lifeNow() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.life
}
