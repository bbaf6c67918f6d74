// powercut cuts the power of the storybox image under QEMU at random
// moments and checks what the box remembers after each restart on the same
// disk (docs/image.md, power cuts). While commands, settings changes, card
// mappings and uploads stream at the API, QEMU itself is killed (SIGKILL:
// the guest's page cache and everything in flight are gone, as on a real
// power cut); then the box boots again and must have /perm mounted,
// every change acknowledged more than -margin before the cut, nothing it
// was never asked for, no torn value, and no log line about a corrupt
// file. Some cuts (-early) land during the boot instead.
//
// gokrazy-instance/powercut-test.sh prepares the disk and the QEMU command
// and runs this with it after "--"; it checks the file system and the
// uploaded files' content offline afterwards.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

type config struct {
	qemu         []string
	logDir       string
	apiPort      int
	tlsPort      int
	cert         string
	passwordFile string
	manifest     string
	cuts         int
	seed         uint64
	bootTimeout  time.Duration
	cutMin       time.Duration
	cutMax       time.Duration
	margin       time.Duration
	early        float64
}

func main() {
	var c config
	flag.StringVar(&c.logDir, "log-dir", ".", "where the serial console of each boot is written")
	flag.IntVar(&c.apiPort, "api-port", 0, "host port forwarded to the guest's 8090")
	flag.IntVar(&c.tlsPort, "tls-port", 0, "host port forwarded to the guest's 9443 (gokrazy's web interface)")
	flag.StringVar(&c.cert, "cert", "", "the web interface's certificate (its public key is pinned)")
	flag.StringVar(&c.passwordFile, "password-file", "", "the update password")
	flag.StringVar(&c.manifest, "manifest", "", "file to write every upload's name, SHA-256 and size to")
	flag.IntVar(&c.cuts, "cuts", 20, "power cuts")
	flag.Uint64Var(&c.seed, "seed", 0, "random seed (0: from the clock); the run prints it")
	flag.DurationVar(&c.bootTimeout, "boot-timeout", 5*time.Minute, "longest wait for the API after QEMU starts")
	flag.DurationVar(&c.cutMin, "cut-min", 1500*time.Millisecond, "earliest cut after the streams start")
	flag.DurationVar(&c.cutMax, "cut-max", 8*time.Second, "latest cut after the streams start")
	flag.DurationVar(&c.margin, "margin", time.Second, "a change acknowledged this long before the cut must survive it")
	flag.Float64Var(&c.early, "early", 0.2, "share of the cuts that land during the boot instead")
	flag.Parse()
	c.qemu = flag.Args()
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "powercut:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "powercut: FAIL:", err)
		os.Exit(1)
	}
}

func (c config) validate() error {
	switch {
	case len(c.qemu) == 0:
		return errors.New("no QEMU command after --")
	case c.apiPort <= 0 || c.tlsPort <= 0:
		return errors.New("-api-port and -tls-port are needed")
	case c.cert == "" || c.passwordFile == "" || c.manifest == "":
		return errors.New("-cert, -password-file and -manifest are needed")
	case c.cuts < 1:
		return errors.New("-cuts must be at least 1")
	case c.cutMin < c.margin || c.cutMax < c.cutMin:
		return errors.New("want -margin <= -cut-min <= -cut-max: the streams' first changes must have time to reach the disk")
	case c.early < 0 || c.early > 1:
		return errors.New("-early is a share, 0..1")
	}
	return nil
}

// vm is one run of QEMU on the test's disk.
type vm struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startVM(cfg config, serial string) (*vm, error) {
	args := append(slices.Clone(cfg.qemu[1:]), "-serial", "file:"+serial)
	cmd := exec.Command(cfg.qemu[0], args...)
	cmd.Stderr = os.Stderr
	// QEMU must never outlive the test, not even a killed one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	v := &vm{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(v.done) }()
	return v, nil
}

func (v *vm) alive() bool {
	select {
	case <-v.done:
		return false
	default:
		return true
	}
}

// cut is the power cut: QEMU is killed outright.
func (v *vm) cut() {
	_ = v.cmd.Process.Kill()
	<-v.done
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

type figures struct {
	boots             []time.Duration
	cycles            []time.Duration
	early             int
	hung              []int // boots that hung and were power-cycled once more
	must, acked, sent int
}

func run(ctx context.Context, cfg config) error {
	fmt.Printf("powercut: %d cuts, seed %d (rerun the same choices with -seed %d)\n", cfg.cuts, cfg.seed, cfg.seed)
	b, err := newBox(cfg)
	if err != nil {
		return err
	}
	man, err := os.Create(cfg.manifest)
	if err != nil {
		return err
	}
	defer man.Close()
	m := newModel(man)
	rng := rand.New(rand.NewPCG(cfg.seed, 0))
	var fig figures
	t0 := time.Now()
	var lastBoot time.Duration
	for cycle := 0; cycle <= cfg.cuts; cycle++ {
		c0 := time.Now()
		serial := filepath.Join(cfg.logDir, fmt.Sprintf("powercut-%02d.serial.log", cycle))
		v, err := startVM(cfg, serial)
		if err != nil {
			return err
		}
		fail := func(err error) error {
			b.explain(ctx, strings.TrimSuffix(serial, ".serial.log"))
			printTail(serial, 20)
			v.cut()
			return fmt.Errorf("boot %d (serial console: %s): %w", cycle, serial, err)
		}
		if cycle > 0 && cycle < cfg.cuts && lastBoot > 2*time.Second && rng.Float64() < cfg.early {
			// A cut while the box starts: journal replay, playerd's first
			// writes, gokrazy's random seed.
			at := between(rng, time.Second, lastBoot)
			if err := sleepCtx(ctx, at); err != nil {
				return fail(err)
			}
			v.cut()
			fig.early++
			fig.cycles = append(fig.cycles, time.Since(c0))
			fmt.Printf("cut %2d/%d during the boot, %.1f s after QEMU started\n", cycle+1, cfg.cuts, at.Seconds())
			continue
		}
		boot, err := b.healthy(ctx, v.alive, cfg.bootTimeout)
		if err != nil && v.alive() && !b.explain(ctx, strings.TrimSuffix(serial, ".serial.log")) {
			// Neither playerd nor gokrazy answers: the emulated machine or
			// its emulated network is stuck (TCG has such hangs; test-pi
			// power-cycles its board for the same reason), not playerd,
			// whose failure gokrazy would show. That is one more cut, while
			// the box starts; a box that hangs again fails the test.
			fmt.Printf("boot %2d hung: neither playerd nor gokrazy answered within %v; the serial console (%s) ends:\n", cycle, cfg.bootTimeout, serial)
			printTail(serial, 20)
			v.cut()
			fig.hung = append(fig.hung, cycle)
			serial = filepath.Join(cfg.logDir, fmt.Sprintf("powercut-%02d-again.serial.log", cycle))
			if v, err = startVM(cfg, serial); err != nil {
				return err
			}
			fmt.Printf("boot %2d: power-cycled once more\n", cycle)
			boot, err = b.healthy(ctx, v.alive, cfg.bootTimeout)
		}
		if err != nil {
			return fail(err)
		}
		lastBoot = boot
		fig.boots = append(fig.boots, boot)
		if err := check(ctx, b, m); err != nil {
			return fail(err)
		}
		fmt.Printf("boot %2d: API in %.1f s; remembers volume %d, queue %v, idle_off_minutes %d, %d cards, %d uploads\n",
			cycle, boot.Seconds(), m.volume.known, m.queue.known, m.idle.known, len(m.cards.known), len(m.uploads.known))
		if cycle == cfg.cuts {
			if err := b.powerOff(ctx); err != nil {
				return fail(fmt.Errorf("clean power-off: %w", err))
			}
			select {
			case <-v.done:
			case <-time.After(2 * time.Minute):
				return fail(errors.New("the box did not power off within 2 minutes"))
			}
			fmt.Printf("boot %2d: powered off cleanly\n", cycle)
			break
		}
		var cut atomic.Bool
		s := &streams{b: b, m: m, cut: &cut, seed: cfg.seed + uint64(cycle)*1000}
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { s.run(sctx); close(done) }()
		after := between(rng, cfg.cutMin, cfg.cutMax)
		err = sleepCtx(ctx, after)
		cut.Store(true)
		at := time.Now()
		v.cut()
		cancel()
		<-done
		if err != nil {
			return err
		}
		if len(s.errs) > 0 {
			return fmt.Errorf("cycle %d: the box failed requests before the cut: %w", cycle, errors.Join(s.errs...))
		}
		must, acked := m.cut(at, cfg.margin)
		fig.must += must
		fig.acked += acked
		var parts []string
		for _, name := range []string{"commands", "settings", "cards", "uploads"} {
			t := s.counts[name]
			fig.sent += t.sent
			parts = append(parts, fmt.Sprintf("%d/%d %s", t.acked, t.sent, name))
		}
		fig.cycles = append(fig.cycles, time.Since(c0))
		fmt.Printf("cut %2d/%d after %.1f s of streaming: acknowledged/sent %s; %d had to survive\n",
			cycle+1, cfg.cuts, after.Seconds(), strings.Join(parts, ", "), must)
	}
	fig.report(time.Since(t0))
	return nil
}

func (f figures) report(total time.Duration) {
	mean := func(ds []time.Duration) (lo, avg, hi time.Duration) {
		if len(ds) == 0 {
			return
		}
		lo, hi = ds[0], ds[0]
		var sum time.Duration
		for _, d := range ds {
			lo, hi, sum = min(lo, d), max(hi, d), sum+d
		}
		return lo, sum / time.Duration(len(ds)), hi
	}
	blo, bavg, bhi := mean(f.boots)
	clo, cavg, chi := mean(f.cycles)
	fmt.Printf("powercut: PASS in %s: %d cuts (%d during the boot); boot to API %.1f/%.1f/%.1f s (min/mean/max), cut cycle %.1f/%.1f/%.1f s; %d changes sent, %d acknowledged, %d of them in time to have to survive the cut: all there\n",
		total.Round(time.Second), len(f.cycles), f.early, blo.Seconds(), bavg.Seconds(), bhi.Seconds(),
		clo.Seconds(), cavg.Seconds(), chi.Seconds(), f.sent, f.acked, f.must)
	if len(f.hung) > 0 {
		fmt.Printf("powercut: %d boot(s) hung with neither playerd nor gokrazy answering and came up after one more power cycle: %v\n", len(f.hung), f.hung)
	}
}

// printTail prints the last n lines of the serial console at path.
func printTail(path string, n int) {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Printf("serial| (%v)\n", err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for _, l := range lines[max(0, len(lines)-n):] {
		fmt.Printf("serial| %s\n", strings.TrimRight(l, "\r"))
	}
}
