// Command hatd owns the MuPiHAT battery board on I²C and serves its status,
// with a battery estimate, as HTTP+JSON on a Unix socket for playerd.
//
// Every flag can also be set by the environment variable named in its help.
// Without -sim, hatd exits with status 125 when the I²C bus is missing,
// which tells gokrazy not to restart it. When no charger answers on the bus
// it keeps serving (hardware_available false) and asks again, every minute
// at the latest: a board that answers late still gets its battery
// protection (docs/faults.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/d2r2/go-logger"
)

func main() {
	// go-i2c logs every transfer at debug level to its own stdout handle.
	_ = logger.ChangePackageLogLevel("i2c", logger.InfoLevel)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		log.Error("configuration", "err", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = run(ctx, cfg, log)
	switch {
	case errors.Is(err, errNoBoard):
		log.Warn("no battery board, not restarting", "err", err)
		os.Exit(125)
	case err != nil:
		log.Error("hatd", "err", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (Config, error) {
	c := DefaultConfig
	fs := flag.NewFlagSet("hatd", flag.ContinueOnError)
	fs.StringVar(&c.Socket, "socket", env("HATD_SOCKET", c.Socket), "Unix socket to serve on ($HATD_SOCKET)")
	fs.BoolVar(&c.Sim, "sim", envBool("HATD_SIM", c.Sim), "simulate the board instead of using I²C ($HATD_SIM)")
	fs.Float64Var(&c.SimSpeed, "sim-speed", envFloat("HATD_SIM_SPEED", c.SimSpeed), "simulated battery runs this many times faster ($HATD_SIM_SPEED)")
	fs.Float64Var(&c.SimSoC, "sim-soc", envFloat("HATD_SIM_SOC", c.SimSoC), "simulated initial state of charge, 0–1 ($HATD_SIM_SOC)")
	fs.BoolVar(&c.SimExternalPower, "sim-usb", envBool("HATD_SIM_USB", c.SimExternalPower), "simulated board starts on USB power ($HATD_SIM_USB)")
	fs.IntVar(&c.Bus, "i2c-bus", envInt("HATD_I2C_BUS", c.Bus), "I²C bus number ($HATD_I2C_BUS)")
	fs.IntVar(&c.Addr, "i2c-addr", envInt("HATD_I2C_ADDR", c.Addr), "charger address ($HATD_I2C_ADDR)")
	fs.StringVar(&c.Profile, "profile", env("HATD_PROFILE", c.Profile), "battery profile: ansmann-2s1p, enerpower-2s2p-10ah, usb-only ($HATD_PROFILE)")
	fs.StringVar(&c.ProfileFile, "profile-file", env("HATD_PROFILE_FILE", c.ProfileFile), "custom battery profile as JSON; overrides -profile ($HATD_PROFILE_FILE)")
	fs.IntVar(&c.InputLimitMA, "input-limit-ma", envInt("HATD_INPUT_LIMIT_MA", c.InputLimitMA), "input current limit: 1790, 2200 or 2700 mA ($HATD_INPUT_LIMIT_MA)")
	fs.DurationVar(&c.Interval, "interval", envDuration("HATD_INTERVAL", c.Interval), "sampling interval ($HATD_INTERVAL)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return c, c.Validate()
}

func env(k, def string) string {
	if v, ok := os.LookupEnv(k); ok {
		return v
	}
	return def
}

func envBool(k string, def bool) bool {
	v, err := strconv.ParseBool(env(k, strconv.FormatBool(def)))
	if err != nil {
		return def
	}
	return v
}

func envInt(k string, def int) int {
	v, err := strconv.ParseInt(env(k, strconv.Itoa(def)), 0, 64)
	if err != nil {
		return def
	}
	return int(v)
}

func envFloat(k string, def float64) float64 {
	v, err := strconv.ParseFloat(env(k, ""), 64)
	if err != nil {
		return def
	}
	return v
}

func envDuration(k string, def time.Duration) time.Duration {
	v, err := time.ParseDuration(env(k, ""))
	if err != nil {
		return def
	}
	return v
}
