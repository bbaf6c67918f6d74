package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/hatd/internal/sim"
	"github.com/storybox/storybox/services/hatd/internal/status"
	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/daemon/daemontest"
	"github.com/storybox/storybox/services/internal/fault"
)

func unixClient(sock string) *daemon.Client {
	return daemon.NewClient(sock, "hatd", "hatd unavailable")
}

func tryStatus(c *daemon.Client) (status.Status, error) {
	var st status.Status
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return st, c.Call(ctx, "GET", "/status", nil, &st)
}

// waitStatus polls hatd until cond holds. Requests may fail only while hatd
// is starting (no socket yet). The deadline only bounds a hang; run
// returning early ends the wait at once.
func waitStatus(t *testing.T, c *daemon.Client, done <-chan error, starting bool, what string, cond func(status.Status) bool) status.Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := tryStatus(c)
		if err == nil && cond(st) {
			return st
		}
		if err != nil && !starting {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		select {
		case runErr := <-done:
			t.Fatalf("waiting for %s: run returned %v", what, runErr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: last status %+v, error %v", what, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRunSimulated(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "run", "hatd.sock") // directory does not exist yet
	// A stale socket from a crashed run must not stop the start.
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()

	cfg := DefaultConfig
	cfg.Sim, cfg.Socket, cfg.Interval, cfg.SimSpeed = true, sock, 100*time.Millisecond, 10
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, slog.New(slog.DiscardHandler)) }()

	c := unixClient(sock)
	st := waitStatus(t, c, done, true, "a battery level", func(st status.Status) bool {
		return st.BatteryPercent != nil && st.Level != nil
	})
	if !st.HardwareAvailable || *st.Level != "ok" || st.ChargerStatus == nil || *st.ChargerStatus != "not_charging" {
		t.Fatalf("status %+v", st)
	}
	if p := *st.BatteryPercent; p < 70 || p > 100 {
		t.Errorf("percent %d at SoC 0.8", p)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	soc := 0.02
	if err := c.Call(ctx2, "POST", "/sim", sim.Control{SoC: &soc}, nil); err != nil {
		t.Fatalf("POST /sim: %v", err)
	}
	soc = 2
	if err := c.Call(ctx2, "POST", "/sim", sim.Control{SoC: &soc}, nil); fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), "soc must be") {
		t.Errorf("bad control: %v", err)
	}
	waitStatus(t, c, done, false, "level critical", func(st status.Status) bool {
		return st.Level != nil && *st.Level == "critical"
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// A missing I²C bus is a board no restart brings: hatd exits 125, and so
// does a configuration that can never work (hatd exited 2 before, and
// gokrazy restarted it every second).
func TestExits125(t *testing.T) {
	cfg := DefaultConfig
	cfg.Bus = 97 // no /dev/i2c-97 here or on a box
	cfg.Socket = filepath.Join(shortDir(t), "s.sock")
	err := run(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if !errors.Is(err, errNoBoard) || !daemon.IsPermanent(err) {
		t.Fatalf("err = %v", err)
	}
	for _, args := range [][]string{
		{"-socket", cfg.Socket, "-i2c-bus", "97"},
		{"-profile", "nope"},
		{"-interval", "1h"},
		{"-socket", ""},
		{"-socket", "run/hatd.sock"},
		{"-sim-soc", "1.5"},
		{"-profile-file", "/nonexistent.json"},
		{"-i2c-addr", "0x80"},
		{"-input-limit-ma", "5000"},
		{"extra"},
	} {
		var log strings.Builder
		if code := daemon.Start(context.Background(), program, args, &log); code != daemon.ExitNoRestart {
			t.Errorf("%v: exit %d, want %d; log %s", args, code, daemon.ExitNoRestart, log.String())
		}
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	t.Setenv("HATD_PROFILE", "usb-only")
	t.Setenv("HATD_I2C_ADDR", "0x6a")
	c, err := daemon.Parse(program, []string{"-sim"}, nil)
	if err != nil || c.Profile != "usb-only" || !c.Sim || c.Addr != 0x6a || c.Validate() != nil {
		t.Errorf("env: %+v %v", c, err)
	}
	// A malformed value is an error, not the default (hatd fell back to
	// 2 s here before).
	t.Setenv("HATD_INTERVAL", "5")
	if _, err := daemon.Parse(program, nil, nil); err == nil || !strings.Contains(err.Error(), "HATD_INTERVAL") {
		t.Errorf("HATD_INTERVAL=5: %v", err)
	}
}

// flakyBus is the simulated board behind a bus that can be cut: every
// transfer fails while down, as with a board that is unplugged or not yet
// powered.
type flakyBus struct {
	*sim.Board
	down atomic.Bool
}

var errBus = errors.New("i2c: remote I/O error")

func (b *flakyBus) ReadRegU8(reg byte) (byte, error) {
	if b.down.Load() {
		return 0, errBus
	}
	return b.Board.ReadRegU8(reg)
}

func (b *flakyBus) WriteRegU8(reg, v byte) error {
	if b.down.Load() {
		return errBus
	}
	return b.Board.WriteRegU8(reg, v)
}

func (b *flakyBus) ReadRegU16BE(reg byte) (uint16, error) {
	if b.down.Load() {
		return 0, errBus
	}
	return b.Board.ReadRegU16BE(reg)
}

func (b *flakyBus) WriteRegU16BE(reg byte, v uint16) error {
	if b.down.Load() {
		return errBus
	}
	return b.Board.WriteRegU16BE(reg, v)
}

// A charger that does not answer at start, or stops answering, does not end
// hatd: it serves hardware_available false and picks the board up again.
func TestChargerAnswersLate(t *testing.T) {
	cfg := DefaultConfig
	cfg.Socket, cfg.Interval = filepath.Join(shortDir(t), "h.sock"), 100*time.Millisecond
	prof, err := cfg.profile()
	if err != nil {
		t.Fatal(err)
	}
	bus := &flakyBus{Board: sim.New(sim.Options{SoC: 0.7, Seed: 1})}
	bus.down.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveBoard(ctx, cfg, prof, bus, nil, slog.New(slog.DiscardHandler)) }()
	c := unixClient(cfg.Socket)
	wait := func(what string, ok func(status.Status) bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			if st, err := tryStatus(c); err == nil && ok(st) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	wait("a status without a charger", func(st status.Status) bool {
		return !st.HardwareAvailable && st.BatteryPercent == nil && st.Profile == prof.Name
	})
	bus.down.Store(false)
	wait("the charger", func(st status.Status) bool { return st.HardwareAvailable && st.BatteryPercent != nil })
	bus.down.Store(true)
	wait("the charger to be missed", func(st status.Status) bool { return !st.HardwareAvailable })
	bus.down.Store(false)
	wait("the charger again", func(st status.Status) bool { return st.HardwareAvailable })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A socket that another hatd still holds is taken over once it is free.
func TestSocketRetried(t *testing.T) {
	sock := filepath.Join(shortDir(t), "h.sock")
	other, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig
	cfg.Sim, cfg.Socket, cfg.Interval = true, sock, 100*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, slog.New(slog.DiscardHandler)) }()
	// While the other holds it, requests reach the other; then it goes.
	go func() {
		conn, err := other.Accept()
		if err == nil {
			conn.Close()
		}
	}()
	if _, err := tryStatus(unixClient(sock)); err == nil {
		t.Fatal("answered through the other's socket")
	}
	other.Close()
	c := unixClient(sock)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if st, err := tryStatus(c); err == nil && st.HardwareAvailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("hatd never took the socket over")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hatd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// panicBus is the simulated board behind a bus whose first transfer
// panics, as a bug on an answer the driver did not expect would.
type panicBus struct {
	*sim.Board
	transfers atomic.Int32
	again     chan struct{} // closed at the first transfer after the panic
}

func (b *panicBus) transfer() {
	switch b.transfers.Add(1) {
	case 1:
		panic("unexpected register value")
	case 2:
		close(b.again)
	}
}

func (b *panicBus) ReadRegU8(reg byte) (byte, error) { b.transfer(); return b.Board.ReadRegU8(reg) }
func (b *panicBus) WriteRegU8(reg, v byte) error     { b.transfer(); return b.Board.WriteRegU8(reg, v) }
func (b *panicBus) ReadRegU16BE(reg byte) (uint16, error) {
	b.transfer()
	return b.Board.ReadRegU16BE(reg)
}
func (b *panicBus) WriteRegU16BE(reg byte, v uint16) error {
	b.transfer()
	return b.Board.WriteRegU16BE(reg, v)
}

// A part that fails is logged and started again while the other goes on:
// the charger panics on its first transfer, is started again after the
// pause and programs the board; the socket serves throughout. Cancelling
// ends both parts and removes the socket.
func TestPartsRestartAndStop(t *testing.T) {
	cfg := DefaultConfig
	cfg.Socket, cfg.Interval = filepath.Join(shortDir(t), "h.sock"), 100*time.Millisecond
	prof, err := cfg.profile()
	if err != nil {
		t.Fatal(err)
	}
	bus := &panicBus{Board: sim.New(sim.Options{SoC: 0.7, Seed: 1}), again: make(chan struct{})}
	log := daemontest.NewLog()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveBoard(ctx, cfg, prof, bus, nil, log.Logger()) }()
	log.Wait("charger failed, restarting")
	<-bus.again
	log.Wait("battery level") // sampled after the restart
	log.Wait("serving")
	st, err := tryStatus(unixClient(cfg.Socket))
	if err != nil || !st.HardwareAvailable {
		t.Errorf("status after the restart: %+v %v", st, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.Socket); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}
