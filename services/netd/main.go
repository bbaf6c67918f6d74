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
	"flag"

	"github.com/storybox/storybox/services/internal/daemon"
)

func main() { daemon.Main(program) }

var program = daemon.Program[Config]{Name: "netd", Env: "NETD", Default: DefaultConfig, Flags: flags, Run: run}

func flags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.Socket, "socket", c.Socket, "Unix socket to serve on")
	fs.StringVar(&c.State, "state", c.State, "directory of the known networks, mode 0700")
	fs.StringVar(&c.Interface, "interface", c.Interface, "Wi-Fi interface; empty: the first client interface")
	fs.StringVar(&c.Country, "country", c.Country, "regulatory country (e.g. DE) until one is set through the API; empty: the kernel's")
	fs.StringVar(&c.DHCP, "dhcp", c.DHCP, "DHCP client program, run as PROGRAM -interface=IFACE")
	fs.StringVar(&c.Modules, "modules", c.Modules, "kernel modules to load at start, comma-separated; NAME? if it may be missing")
	fs.StringVar(&c.BootMount, "mount-boot", c.BootMount, "mount the SD card's boot partition here to pick up wifi.json; empty: don't")
	fs.StringVar(&c.BootDir, "boot-dir", c.BootDir, "a directory (already mounted) to pick up wifi.json from, instead of -mount-boot")
	fs.StringVar(&c.Hostname, "hostname", c.Hostname, "name announced as NAME.local; empty: the system's")
	fs.BoolVar(&c.MDNS, "mdns", c.MDNS, "announce the box by mDNS")
	fs.IntVar(&c.HTTPPort, "http-port", c.HTTPPort, "port of the box's API and admin page, announced as _http._tcp")
	fs.DurationVar(&c.JoinTimeout, "join-timeout", c.JoinTimeout, "how long a join may take")
	fs.DurationVar(&c.RetryMax, "retry-max", c.RetryMax, "longest pause between attempts to join")
}
