// Command syncd lets the boxes of a household share their library, card
// mappings and catalog, peer to peer on the home network, through
// Syncthing (docs/household.md). It makes the box's Syncthing keys once,
// writes Syncthing's configuration with everything that would reach
// beyond the boxes a parent added switched off, runs Syncthing only while
// the household has another box (a box alone pays nothing for it), at low
// priority and under a memory limit, and serves the household on a Unix
// socket for playerd: this box's device id, the boxes found and added,
// how far each is in sync, and the changes Syncthing made.
//
// Every flag can also be set by the environment variable named in its
// help. A configuration that can never work ends syncd with status 125,
// which tells gokrazy not to restart it.
package main

import (
	"flag"

	"github.com/storybox/storybox/services/internal/daemon"
)

func main() { daemon.Main(program) }

var program = daemon.Program[Config]{Name: "syncd", Env: "SYNCD", Default: DefaultConfig, Flags: flags, Run: run}

func flags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.Socket, "socket", c.Socket, "Unix socket to serve on")
	fs.StringVar(&c.State, "state", c.State, "directory of the keys, the API key and the household, mode 0700")
	fs.StringVar(&c.Syncthing, "syncthing", c.Syncthing, "the syncthing program")
	fs.StringVar(&c.Household, "household", c.Household, "the shared folder of card mappings and catalog (playerd's data directory/household)")
	fs.StringVar(&c.Media, "media", c.Media, "the library")
	fs.StringVar(&c.GUI, "gui", c.GUI, "loopback HOST:PORT of Syncthing's REST API")
	fs.IntVar(&c.Port, "port", c.Port, "TCP port Syncthing listens on for the other boxes")
	fs.StringVar(&c.Name, "name", c.Name, "this box's name as the other boxes show it; empty: the host name")
	fs.Int64Var(&c.MemoryLimit, "memory-limit", c.MemoryLimit, "Syncthing's memory limit in bytes (GOMEMLIMIT, and memory.max with -cgroup)")
	fs.StringVar(&c.Cgroup, "cgroup", c.Cgroup, "cgroup v2 directory to run Syncthing in; empty: GOMEMLIMIT alone")
	fs.BoolVar(&c.Browse, "browse", c.Browse, "look for other boxes by mDNS")
}
