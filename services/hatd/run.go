package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/d2r2/go-i2c"

	"github.com/storybox/storybox/services/hatd/internal/battery"
	"github.com/storybox/storybox/services/hatd/internal/bq25792"
	"github.com/storybox/storybox/services/hatd/internal/server"
	"github.com/storybox/storybox/services/hatd/internal/sim"
	"github.com/storybox/storybox/services/hatd/internal/status"
	"github.com/storybox/storybox/services/internal/daemon"
)

// Config is hatd's configuration.
type Config struct {
	Socket           string
	Sim              bool
	SimSpeed         float64
	SimSoC           float64
	SimExternalPower bool
	Bus              int
	Addr             int
	Profile          string
	ProfileFile      string
	InputLimitMA     int
	Interval         time.Duration
}

// DefaultConfig is the MuPiHAT on a Raspberry Pi.
var DefaultConfig = Config{
	Socket: "/run/hatd/hatd.sock", SimSpeed: 1, SimSoC: 0.8,
	Bus: 1, Addr: 0x6B, Profile: battery.DefaultProfile, InputLimitMA: 2200, Interval: 2 * time.Second,
}

// Validate checks the configuration without touching hardware.
func (c Config) Validate() error {
	if err := daemon.CheckSocket("-socket", c.Socket); err != nil {
		return err
	}
	if c.Interval < 100*time.Millisecond || c.Interval > time.Minute {
		return fmt.Errorf("-interval %s: want 100ms–1m (the charger's watchdog is fed at this rate)", c.Interval)
	}
	if c.SimSpeed <= 0 || c.SimSoC < 0 || c.SimSoC > 1 {
		return errors.New("-sim-speed must be above 0 and -sim-soc between 0 and 1")
	}
	if c.Addr < 0x08 || c.Addr > 0x77 || c.Bus < 0 {
		return fmt.Errorf("I²C bus %d address %#x", c.Bus, c.Addr)
	}
	prof, err := c.profile()
	if err != nil {
		return err
	}
	return chargerOpts(c, prof).Validate()
}

// chargerOpts are the charger's limits for the battery profile.
func chargerOpts(c Config, prof battery.Profile) *bq25792.Opts {
	return &bq25792.Opts{
		Cells:               max(prof.Cells, 1),
		ChargeVoltageMV:     prof.ChargeVoltageMV,
		ChargeCurrentMA:     prof.ChargeCurrentMA,
		InputCurrentLimitMA: c.InputLimitMA,
		EnableCharging:      !prof.NoBattery,
	}
}

func (c Config) profile() (battery.Profile, error) {
	if c.ProfileFile == "" {
		return battery.Lookup(c.Profile)
	}
	f, err := os.Open(c.ProfileFile)
	if err != nil {
		return battery.Profile{}, err
	}
	defer f.Close()
	return battery.Decode(f)
}

// errNoBoard: the I²C bus itself is missing (the image does not enable
// it), which no restart fixes: hatd exits 125. A bus on which no charger
// answers is not this: the board may answer later, so hatd keeps asking
// (connect).
var errNoBoard = errors.New("no battery board")

func run(ctx context.Context, cfg Config, log *slog.Logger) error {
	prof, err := cfg.profile()
	if err != nil {
		return err
	}
	var (
		bus   bq25792.Bus
		board *sim.Board
	)
	if cfg.Sim {
		board = sim.New(sim.Options{Speed: cfg.SimSpeed, SoC: cfg.SimSoC, ExternalPower: cfg.SimExternalPower, Seed: uint64(time.Now().UnixNano())})
		bus = board
	} else {
		b, err := i2c.NewI2C(uint8(cfg.Addr), cfg.Bus)
		if err != nil {
			return daemon.Permanent(fmt.Errorf("%w: open I²C bus %d: %w", errNoBoard, cfg.Bus, err))
		}
		defer b.Close()
		bus = b
	}
	return serveBoard(ctx, cfg, prof, bus, board, log)
}

// serveBoard serves the status while it keeps the charger programmed and
// sampled. Nothing the board or the socket does ends it; only ctx does:
// the status says what is wrong (hardware_available false) and playerd
// keeps its battery protection as soon as the board answers again. Its two
// parts, the socket and the charger, are supervised (daemon.Group): one
// that fails or panics is logged and started again after 1, 2, 4 … s, at
// most a minute apart, while the other goes on. None is essential: what
// no restart fixes (no I²C bus) is refused before they start (exit 125),
// and a crash of hatd would only restart the same way, every second.
func serveBoard(ctx context.Context, cfg Config, prof battery.Profile, bus bq25792.Bus, board *sim.Board, log *slog.Logger) error {
	opts := chargerOpts(cfg, prof)
	if err := opts.Validate(); err != nil {
		return daemon.Permanent(err) // Validate refuses these before
	}
	var sampler atomic.Pointer[status.Sampler]
	statusNow := func() status.Status {
		if s := sampler.Load(); s != nil {
			return s.Status()
		}
		return status.Status{Profile: prof.Name} // no charger yet: nothing known
	}
	sup := daemon.NewGroup(log)
	sup.Restarting(ctx, "socket", func(ctx context.Context) error {
		daemon.ServeSocket(ctx, cfg.Socket, server.NewHandler(server.Deps{Status: statusNow, Sim: board, Log: log}), log)
		return nil
	})
	sup.Restarting(ctx, "charger", func(ctx context.Context) error {
		defer sampler.Store(nil) // a sampler that stopped says nothing current
		return runCharger(ctx, cfg, prof, opts, bus, &sampler, log)
	})
	<-ctx.Done()
	sup.Wait()
	return nil
}

// runCharger finds and programs the charger, then samples it every
// Interval until ctx ends, publishing through sampler.
func runCharger(ctx context.Context, cfg Config, prof battery.Profile, opts *bq25792.Opts, bus bq25792.Bus, sampler *atomic.Pointer[status.Sampler], log *slog.Logger) error {
	dev := connect(ctx, bus, opts, log)
	if dev == nil {
		return nil // ctx ended
	}
	log.Info("charger ready", "part", dev.String(), "profile", prof.Name, "sim", cfg.Sim,
		"vreg_mv", prof.ChargeVoltageMV, "charging_enabled", !prof.NoBattery)
	smp := status.NewSampler(dev, battery.NewEstimator(prof, battery.Options{}), nil)
	sampler.Store(smp)

	var lastErr string
	var lastLevel *string
	step := func() {
		err := smp.Step()
		// Log changes only: gokrazy keeps 100 lines per service.
		if msg := fmt.Sprint(err); err != nil && msg != lastErr {
			log.Error("charger", "err", err)
			lastErr = msg
		} else if err == nil && lastErr != "" {
			log.Info("charger readable again")
			lastErr = ""
		}
		st := smp.Status()
		if fmt.Sprint(deref(st.Level)) != fmt.Sprint(deref(lastLevel)) {
			log.Info("battery level", "level", deref(st.Level), "percent", deref(st.BatteryPercent), "mv", deref(st.BatteryVoltageMV))
			lastLevel = st.Level
		}
	}
	// A few quick samples first, so the estimate is known within a second
	// of the start instead of after a full smoothing window.
	for range battery.DefaultOptions.Window - 1 {
		step()
		select {
		case <-ctx.Done():
		case <-time.After(min(cfg.Interval, 200*time.Millisecond)):
		}
	}
	step()
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			step()
		}
	}
}

// retryMax: the first attempts come quickly, for a glitch on the bus at
// boot; then once a minute, for a box whose board is missing or unplugged
// (one small I²C read a minute costs nothing).
const retryMax = time.Minute

// connect finds and programs the charger, retrying until it answers or ctx
// ends (nil then).
func connect(ctx context.Context, bus bq25792.Bus, opts *bq25792.Opts, log *slog.Logger) *bq25792.Dev {
	retry := daemon.Backoff{Max: retryMax}
	var lastErr string
	for {
		dev, err := bq25792.New(bus, opts)
		if err == nil {
			if lastErr != "" {
				log.Info("charger answers")
			}
			return dev
		}
		if msg := err.Error(); msg != lastErr {
			log.Warn("no charger yet, asking again", "err", err, "every", retryMax)
			lastErr = msg
		}
		if !retry.Wait(ctx) {
			return nil
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
