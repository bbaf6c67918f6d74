package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/d2r2/go-i2c"

	"github.com/storybox/storybox/services/hatd/internal/battery"
	"github.com/storybox/storybox/services/hatd/internal/bq25792"
	"github.com/storybox/storybox/services/hatd/internal/server"
	"github.com/storybox/storybox/services/hatd/internal/sim"
	"github.com/storybox/storybox/services/hatd/internal/status"
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
	if c.Socket == "" {
		return errors.New("-socket is empty")
	}
	if len(c.Socket) > 100 {
		return fmt.Errorf("socket path %q is too long for a Unix socket", c.Socket)
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
	_, err := c.profile()
	return err
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

// errNoBoard: nothing answered on the bus; main exits 125.
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
			return fmt.Errorf("%w: open I²C bus %d: %w", errNoBoard, cfg.Bus, err)
		}
		defer b.Close()
		bus = b
	}
	dev, err := bq25792.New(bus, &bq25792.Opts{
		Cells:               max(prof.Cells, 1),
		ChargeVoltageMV:     prof.ChargeVoltageMV,
		ChargeCurrentMA:     prof.ChargeCurrentMA,
		InputCurrentLimitMA: cfg.InputLimitMA,
		EnableCharging:      !prof.NoBattery,
	})
	if errors.Is(err, bq25792.ErrNoDevice) {
		return fmt.Errorf("%w: %w", errNoBoard, err)
	}
	if err != nil {
		return err
	}
	log.Info("charger ready", "part", dev.String(), "profile", prof.Name, "sim", cfg.Sim,
		"vreg_mv", prof.ChargeVoltageMV, "charging_enabled", !prof.NoBattery)

	sampler := status.NewSampler(dev, battery.NewEstimator(prof, battery.Options{}), nil)
	l, err := server.Listen(cfg.Socket)
	if err != nil {
		return err
	}
	defer os.Remove(cfg.Socket)
	srv := &http.Server{
		Handler:           server.NewHandler(server.Deps{Status: sampler.Status, Sim: board, Log: log}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(l) }()
	log.Info("serving", "socket", cfg.Socket)

	var lastErr string
	var lastLevel *string
	step := func() {
		err := sampler.Step()
		// Log changes only: gokrazy keeps 100 lines per service.
		if msg := fmt.Sprint(err); err != nil && msg != lastErr {
			log.Error("charger", "err", err)
			lastErr = msg
		} else if err == nil && lastErr != "" {
			log.Info("charger readable again")
			lastErr = ""
		}
		st := sampler.Status()
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
			sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			return nil
		case err := <-serveErr:
			return fmt.Errorf("serve: %w", err)
		case <-t.C:
			step()
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
