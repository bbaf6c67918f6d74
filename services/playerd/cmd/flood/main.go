// flood measures what a connection flood from one client costs a running
// playerd: how fast other clients' GET /api/status still answers during the
// flood, how many connections the box holds, and its resident memory idle,
// at the peak and while it settles afterwards. It only targets loopback
// (127.0.0.0/8), and models clients by source address: the flood comes from
// -flood-from, the status clients from the next addresses up.
//
//	playerd -listen 127.0.0.1:18090 -media M -data D -fb none -touch none &
//	go run ./services/playerd/cmd/flood -target 127.0.0.1:18090 -pid $!
//
// `make bench-flood` does both. With -burst it measures instead how clients
// behind one address that open a new connection per request fare (`make
// bench-flood FLOOD_FLAGS=-burst=64x50`). Figures are for reports, not
// assertions: the repository's pass/fail checks are TestFloodFromOneAddress
// and TestManyClientsBehindOneAddress.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type config struct {
	target    netip.AddrPort
	pid       int
	conns     int
	floodFrom netip.Addr
	clients   int
	interval  time.Duration
	quiet     time.Duration
	hold      time.Duration
	settle    time.Duration
	redial    time.Duration
}

func main() {
	var c config
	var target, from string
	flag.StringVar(&target, "target", "127.0.0.1:8090", "playerd's address (loopback only)")
	flag.IntVar(&c.pid, "pid", 0, "playerd's process id, for its memory and open files; 0: not measured")
	flag.IntVar(&c.conns, "conns", 10000, "connections the flood opens at once")
	flag.StringVar(&from, "flood-from", "127.0.0.2", "source address of the flood")
	flag.IntVar(&c.clients, "clients", 7, "status clients, each from its own address after -flood-from; odd ones open a new connection per request")
	flag.DurationVar(&c.interval, "interval", 100*time.Millisecond, "pause between one status client's requests")
	flag.DurationVar(&c.quiet, "quiet", 5*time.Second, "status requests measured before the flood")
	flag.DurationVar(&c.hold, "hold", 20*time.Second, "how long the flood holds its connections once all are opened")
	flag.DurationVar(&c.settle, "settle", 3*time.Minute, "memory is watched this long after the flood (one status request a second meanwhile)")
	flag.DurationVar(&c.redial, "redial", 0, "a flood connection the box closes is opened again after this pause; 0: not")
	isChild := flag.Bool("flood-child", false, "run the flood itself (started by flood)")
	burstSize := flag.String("burst", "", "CLIENTSxREQUESTS: instead of the flood, that many clients from -flood-from, each a new connection per request; counts how the requests ended")
	flag.Parse()
	var err error
	if c.target, err = netip.ParseAddrPort(target); err != nil || !c.target.Addr().IsLoopback() {
		fatal(fmt.Errorf("-target %q: want a loopback address and port", target))
	}
	if c.floodFrom, err = netip.ParseAddr(from); err != nil || !c.floodFrom.Is4() || !c.floodFrom.IsLoopback() {
		fatal(fmt.Errorf("-flood-from %q: want an IPv4 loopback address", from))
	}
	if last := c.floodFrom.As4(); int(last[3])+c.clients > 254 {
		fatal(errors.New("-clients: not enough loopback addresses after -flood-from"))
	}
	if *isChild {
		runFlood(c)
		return
	}
	if *burstSize != "" {
		var clients, requests int
		if _, err := fmt.Sscanf(*burstSize, "%dx%d", &clients, &requests); err != nil || clients < 1 || requests < 1 {
			fatal(fmt.Errorf("-burst %q: want CLIENTSxREQUESTS, e.g. 64x50", *burstSize))
		}
		burst(c.target, c.floodFrom, clients, requests)
		return
	}
	if err := run(c); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "flood:", err)
	os.Exit(1)
}

// Phases in which status answers are measured.
const (
	quiet   = iota // before the flood
	opening        // while the flood's connections are being opened
	holding        // while the box holds what it kept of them
	phases
)

var phaseNames = [phases]string{"before the flood", "while the flood opens", "while the flood holds"}

func run(c config) error {
	url := "http://" + c.target.String() + "/api/status"
	addr := c.floodFrom
	var pollers []*poller
	for i := range c.clients {
		addr = addr.Next()
		pollers = append(pollers, newPoller(addr, url, i%2 == 1))
	}
	// Warm up: the first request of each client, then the idle figure.
	for _, p := range pollers {
		if _, err := p.get(); err != nil {
			return fmt.Errorf("status from %s before the flood: %w", p.from, err)
		}
	}
	idle := readProc(c.pid)
	fmt.Printf("idle: %s\n", idle)

	var phase atomic.Int32
	stopPolling := poll(pollers, c.interval, &phase)
	time.Sleep(c.quiet)

	// The flood runs in a child process, so that its thousands of goroutines
	// do not delay the status clients' own measurements here.
	var peak procFigures
	stopSampling := sample(c.pid, &peak)
	phase.Store(opening)
	start := time.Now()
	child, err := startFlood(c)
	if err != nil {
		return err
	}
	// Hold from the moment every connection has had its first answer (or
	// refusal), so a slow accept queue does not shorten the hold.
	opened, err := child.line()
	if err != nil {
		return err
	}
	phase.Store(holding)
	fmt.Printf("flood: %d connections opened in %s; %s\n", c.conns, time.Since(start).Round(time.Millisecond), opened)
	time.Sleep(c.hold)
	summary, err := child.stop()
	if err != nil {
		return err
	}
	fmt.Printf("flood: after %s %s\n", c.hold, summary)
	stopSampling()
	lat := stopPolling()
	for ph := range phases {
		for _, fresh := range []bool{false, true} {
			kind := "keep-alive"
			if fresh {
				kind = "new connection each"
			}
			fmt.Printf("status %s, %s: %s\n", phaseNames[ph], kind, lat[ph][b2i(fresh)])
		}
	}
	fmt.Printf("peak: %s\n", peak)

	// Settling: a UI polling once a second, and the memory figure at marks.
	end := time.Now()
	marks := []time.Duration{0, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 3 * time.Minute}
	for _, m := range marks {
		if m > c.settle {
			break
		}
		for time.Since(end) < m {
			_, _ = pollers[0].get()
			time.Sleep(min(time.Second, m-time.Since(end)))
		}
		fmt.Printf("after +%s: %s\n", m, readProc(c.pid))
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ---------------------------------------------------------------- the flood

// floodChild is the flood process: it prints one line once every
// connection has been answered or refused, and one when its stdin closes
// (then it closes its connections and exits).
type floodChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startFlood(c config) (*floodChild, error) {
	cmd := exec.Command(os.Args[0], "-flood-child", "-target", c.target.String(), "-flood-from", c.floodFrom.String(),
		"-conns", strconv.Itoa(c.conns), "-redial", c.redial.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &floodChild{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}, nil
}

func (f *floodChild) line() (string, error) {
	l, err := f.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("flood process: %w", err)
	}
	return strings.TrimSpace(l), nil
}

func (f *floodChild) stop() (string, error) {
	f.stdin.Close()
	l, err := f.line()
	if werr := f.cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("flood process: %w", werr)
	}
	return l, err
}

func runFlood(c config) {
	var st floodStats
	ctx, cancel := context.WithCancel(context.Background())
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: c.floodFrom.AsSlice()}, Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	for range c.conns {
		wg.Go(func() { flood(ctx, d, c.target.String(), c.redial, &st) })
	}
	for st.settled.Load() < int64(c.conns) {
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("served %d, refused %d, dial errors %d, held now %d\n", st.served.Load(), st.refused.Load(), st.dialErr.Load(), st.held.Load())
	_, _ = io.Copy(io.Discard, os.Stdin)
	fmt.Printf("held %d (at most %d), closed by the box %d\n", st.held.Load(), st.maxHeld.Load(), st.closed.Load())
	cancel()
	wg.Wait()
}

type floodStats struct {
	served, refused, dialErr, closed, settled atomic.Int64
	held, maxHeld                             atomic.Int64
}

// flood opens one keep-alive connection, asks for /api/health on it and
// keeps it open until the box closes it or ctx ends.
func flood(ctx context.Context, d *net.Dialer, target string, redial time.Duration, st *floodStats) {
	first := true
	settle := func() {
		if first {
			first = false
			st.settled.Add(1)
		}
	}
	defer settle()
	for ctx.Err() == nil {
		if !floodOnce(ctx, d, target, st, settle) || redial == 0 {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(redial):
		}
	}
}

// floodOnce reports whether the box ended the connection (false: ctx did,
// or it could not be opened).
func floodOnce(ctx context.Context, d *net.Dialer, target string, st *floodStats, settle func()) bool {
	c, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		if ctx.Err() == nil {
			st.dialErr.Add(1)
		}
		return false
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	br := bufio.NewReaderSize(c, 512)
	_, err = io.WriteString(c, "GET /api/health HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(br, nil)
	}
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		st.refused.Add(1)
		settle()
		return true
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	st.served.Add(1)
	n := st.held.Add(1)
	for m := st.maxHeld.Load(); n > m && !st.maxHeld.CompareAndSwap(m, n); m = st.maxHeld.Load() {
	}
	settle()
	_, err = br.ReadByte() // blocks until the box closes it or ctx does
	st.held.Add(-1)
	if ctx.Err() != nil {
		return false
	}
	st.closed.Add(1)
	return err != nil
}

// ----------------------------------------------------------- status clients

type poller struct {
	from   netip.Addr
	url    string
	fresh  bool // a new connection for every request
	client *http.Client
	mu     sync.Mutex
	lat    [phases][]time.Duration
	errs   [phases]int
}

func newPoller(from netip.Addr, url string, fresh bool) *poller {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: from.AsSlice()}, Timeout: 30 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, DisableKeepAlives: fresh, MaxIdleConnsPerHost: 1}
	return &poller{from: from, url: url, fresh: fresh, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

func (p *poller) get() (time.Duration, error) {
	start := time.Now()
	resp, err := p.client.Get(p.url)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return time.Since(start), err
}

// poll runs every poller until stop, which returns their answers' times by
// phase and by connection kind (keep-alive, new).
func poll(ps []*poller, interval time.Duration, phase *atomic.Int32) (stop func() [phases][2]latencies) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(func() {
			for {
				ph := phase.Load()
				d, err := p.get()
				p.mu.Lock()
				if err != nil {
					p.errs[ph]++
				} else {
					p.lat[ph] = append(p.lat[ph], d)
				}
				p.mu.Unlock()
				select {
				case <-done:
					return
				case <-time.After(interval):
				}
			}
		})
	}
	return func() [phases][2]latencies {
		close(done)
		wg.Wait()
		var l [phases][2]latencies
		for _, p := range ps {
			for ph := range phases {
				k := &l[ph][b2i(p.fresh)]
				k.d = append(k.d, p.lat[ph]...)
				k.errs += p.errs[ph]
			}
		}
		for ph := range phases {
			for k := range 2 {
				slices.Sort(l[ph][k].d)
			}
		}
		return l
	}
}

type latencies struct {
	d    []time.Duration
	errs int
}

func (l latencies) String() string {
	if len(l.d) == 0 {
		return fmt.Sprintf("no answers, %d errors", l.errs)
	}
	q := func(p float64) time.Duration {
		return l.d[min(len(l.d)-1, int(p*float64(len(l.d))))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("%d ok, %d errors; p50 %s, p99 %s, max %s", len(l.d), l.errs, q(0.5), q(0.99), l.d[len(l.d)-1].Round(10*time.Microsecond))
}

// ------------------------------------------------------------ the box's side

type procFigures struct {
	rssKB, hwmKB, fds int
}

func (f procFigures) String() string {
	if f.rssKB == 0 {
		return "not measured (no -pid)"
	}
	return fmt.Sprintf("RSS %.1f MB (high-water %.1f MB), %d open files", float64(f.rssKB)/1024, float64(f.hwmKB)/1024, f.fds)
}

// readProc reads playerd's resident memory and its number of open files
// (sockets included) from /proc.
func readProc(pid int) procFigures {
	var f procFigures
	if pid == 0 {
		return f
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return f
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		switch k {
		case "VmRSS":
			f.rssKB = n
		case "VmHWM":
			f.hwmKB = n
		}
	}
	if ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd"); err == nil {
		f.fds = len(ents)
	}
	return f
}

// sample keeps the largest figures seen in peak until stop is called.
func sample(pid int, peak *procFigures) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			f := readProc(pid)
			peak.rssKB = max(peak.rssKB, f.rssKB)
			peak.hwmKB = max(peak.hwmKB, f.hwmKB)
			peak.fds = max(peak.fds, f.fds)
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}
