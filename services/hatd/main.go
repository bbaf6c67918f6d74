// Command hatd owns the MuPiHAT battery board on I²C and serves its status,
// with a battery estimate, as HTTP+JSON on a Unix socket for playerd.
//
// Every flag can also be set by the environment variable named in its help.
// A configuration that can never work, and without -sim a missing I²C bus,
// end hatd with status 125, which tells gokrazy not to restart it. When no
// charger answers on the bus it keeps serving (hardware_available false)
// and asks again, every minute at the latest: a board that answers late
// still gets its battery protection (docs/faults.md).
package main

import (
	"flag"

	"github.com/d2r2/go-logger"

	"github.com/storybox/storybox/services/internal/daemon"
)

func main() {
	// go-i2c logs every transfer at debug level to its own stdout handle.
	_ = logger.ChangePackageLogLevel("i2c", logger.InfoLevel)
	daemon.Main(program)
}

var program = daemon.Program[Config]{Name: "hatd", Env: "HATD", Default: DefaultConfig, Flags: flags, Run: run}

func flags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.Socket, "socket", c.Socket, "Unix socket to serve on")
	fs.BoolVar(&c.Sim, "sim", c.Sim, "simulate the board instead of using I²C")
	fs.Float64Var(&c.SimSpeed, "sim-speed", c.SimSpeed, "simulated battery runs this many times faster")
	fs.Float64Var(&c.SimSoC, "sim-soc", c.SimSoC, "simulated initial state of charge, 0–1")
	fs.BoolVar(&c.SimExternalPower, "sim-usb", c.SimExternalPower, "simulated board starts on USB power")
	fs.IntVar(&c.Bus, "i2c-bus", c.Bus, "I²C bus number")
	fs.IntVar(&c.Addr, "i2c-addr", c.Addr, "charger address")
	fs.StringVar(&c.Profile, "profile", c.Profile, "battery profile: ansmann-2s1p, enerpower-2s2p-10ah, usb-only")
	fs.StringVar(&c.ProfileFile, "profile-file", c.ProfileFile, "custom battery profile as JSON; overrides -profile")
	fs.IntVar(&c.InputLimitMA, "input-limit-ma", c.InputLimitMA, "input current limit: 1790, 2200 or 2700 mA")
	fs.DurationVar(&c.Interval, "interval", c.Interval, "sampling interval")
}
