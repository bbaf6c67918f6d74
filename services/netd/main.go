// Command netd owns the box's Wi-Fi: it joins the known networks (kept
// under /perm, mode 0600), gets an address by DHCP, reconnects after a drop,
// makes the box findable as <hostname>.local (mDNS), and serves its status
// and commands as HTTP+JSON on a Unix socket that playerd passes on under
// /api/connectivity/ (docs/wifi.md).
//
// Every flag can also be set by the environment variable named in its help.
// A configuration that can never work ends netd with status 125, which
// tells gokrazy not to restart it. Missing hardware is not such a case:
// without a Wi-Fi adapter netd keeps serving (state no_adapter) and keeps
// announcing the box on its other interfaces.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// exitNoRestart is gokrazy's "do not restart" status.
const exitNoRestart = 125

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := start(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

func start(ctx context.Context, args []string, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		log.Error("configuration unusable, not restarting", "err", err)
		return exitNoRestart
	}
	if err := run(ctx, cfg, log); err != nil {
		log.Error("netd stopped", "err", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, help io.Writer) (Config, error) {
	c := DefaultConfig
	fs := flag.NewFlagSet("netd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.Socket, "socket", env("NETD_SOCKET", c.Socket), "Unix socket to serve on ($NETD_SOCKET)")
	fs.StringVar(&c.State, "state", env("NETD_STATE", c.State), "directory of the known networks, mode 0700 ($NETD_STATE)")
	fs.StringVar(&c.Interface, "interface", env("NETD_INTERFACE", c.Interface), "Wi-Fi interface; empty: the first client interface ($NETD_INTERFACE)")
	fs.StringVar(&c.Country, "country", env("NETD_COUNTRY", c.Country), "regulatory country (e.g. DE) until one is set through the API; empty: the kernel's ($NETD_COUNTRY)")
	fs.StringVar(&c.DHCP, "dhcp", env("NETD_DHCP", c.DHCP), "DHCP client program, run as PROGRAM -interface=IFACE ($NETD_DHCP)")
	fs.StringVar(&c.Modules, "modules", env("NETD_MODULES", c.Modules), "kernel modules to load at start, comma-separated; NAME? if it may be missing ($NETD_MODULES)")
	fs.StringVar(&c.BootMount, "mount-boot", env("NETD_MOUNT_BOOT", c.BootMount), "mount the SD card's boot partition here to pick up wifi.json; empty: don't ($NETD_MOUNT_BOOT)")
	fs.StringVar(&c.BootDir, "boot-dir", env("NETD_BOOT_DIR", c.BootDir), "a directory (already mounted) to pick up wifi.json from, instead of -mount-boot ($NETD_BOOT_DIR)")
	fs.StringVar(&c.Hostname, "hostname", env("NETD_HOSTNAME", c.Hostname), "name announced as NAME.local; empty: the system's ($NETD_HOSTNAME)")
	fs.BoolVar(&c.MDNS, "mdns", envBool("NETD_MDNS", c.MDNS), "announce the box by mDNS ($NETD_MDNS)")
	fs.IntVar(&c.HTTPPort, "http-port", envInt("NETD_HTTP_PORT", c.HTTPPort), "port of the box's API and admin page, announced as _http._tcp ($NETD_HTTP_PORT)")
	fs.DurationVar(&c.JoinTimeout, "join-timeout", envDuration("NETD_JOIN_TIMEOUT", c.JoinTimeout), "how long a join may take ($NETD_JOIN_TIMEOUT)")
	fs.DurationVar(&c.RetryMax, "retry-max", envDuration("NETD_RETRY_MAX", c.RetryMax), "longest pause between attempts to join ($NETD_RETRY_MAX)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(help)
			fmt.Fprintln(help, "usage: netd [flags]")
			fs.PrintDefaults()
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return c, nil
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
	v, err := strconv.Atoi(env(k, strconv.Itoa(def)))
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
