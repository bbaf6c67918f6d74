package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of playerd (docs/architecture.md): the core, the surfaces
// over it, and libraries both may use. Every package below
// services/playerd and services/internal is in exactly one set, so a new
// package must be placed before this test passes.
const module = "github.com/storybox/storybox/services/"

// corePackages are the core (internal/box) and the parts it is built
// from. None imports a surface, directly or through another package.
var corePackages = []string{
	"playerd/internal/box",
	"playerd/internal/auth", // the administrator and who calls (auth.Caller)
	"playerd/internal/backup",
	"playerd/internal/battery", // the battery levels the core acts on
	"playerd/internal/cards",   // what a card read does; teach mode, unknown cards
	"playerd/internal/chime",
	"playerd/internal/clock",
	"playerd/internal/decode",
	"playerd/internal/decode/aac",
	"playerd/internal/decode/flac",
	"playerd/internal/decode/mp3",
	"playerd/internal/decode/mp4",
	"playerd/internal/events",
	"playerd/internal/events/playerfeed",
	"playerd/internal/fetch",
	"playerd/internal/home",
	"playerd/internal/household", // what a household of boxes shares, one file per entry, and how edits merge
	"playerd/internal/lang",      // the one decision of the box's language
	"playerd/internal/library",
	"playerd/internal/measure",  // the library's loudness, measured in the background
	"playerd/internal/message",  // the message on screen (the board) and the one handler of a posted one
	"playerd/internal/onscreen", // what the screen shows, as others see it
	"playerd/internal/output",
	"playerd/internal/output/alsa",
	"playerd/internal/output/headphones", // where the headphones are: uevents, /proc/asound, the jack
	"playerd/internal/pairing",           // home-automation pairing: the window, the code, the clients
	"playerd/internal/player",
	"playerd/internal/podcast",
	"playerd/internal/power",
	"playerd/internal/radio",
	"playerd/internal/resample",
	"playerd/internal/rules",
	"playerd/internal/settings",
	"playerd/internal/speech",
	"playerd/internal/state",
	"playerd/internal/stream",
	"playerd/internal/sysinfo",
	"playerd/internal/wiring", // how readers and buttons are wired, and what is connected
}

// surfacePackages are the surfaces, by surface. A surface imports the core
// and libraries, never a package of another surface.
var surfacePackages = map[string][]string{
	"local API":       {"playerd/internal/api", "playerd/internal/adminui"},
	"home automation": {"playerd/internal/hav1", "playerd/internal/haserve", "playerd/internal/pki"},
	"screen":          {"playerd/internal/display", "playerd/internal/display/paint", "playerd/internal/display/wifisetup"},
	"readers and buttons": {
		"playerd/internal/input", "playerd/internal/input/gpio",
	},
	"MPRIS": {"playerd/internal/mpris"},
}

// libraryPackages serve the core and the surfaces alike and import
// neither a surface nor (by the same check) anything that does.
var libraryPackages = []string{
	"internal/answer",
	"internal/atomicfile",
	"internal/bootfs",
	"internal/daemon",
	"internal/fault",
	"internal/netapi",
	"internal/syncapi",
	"playerd/internal/gate",
	"playerd/internal/hat",    // hatd's client; its monitor feeds the core's battery levels
	"playerd/internal/hhlink", // syncd's client and the consent between boxes
	"playerd/internal/httpserve",
	"playerd/internal/loudness", // BS.1770 / R128 measurement
	"playerd/internal/metrics",
	"playerd/internal/netclient",
	"playerd/internal/netlimit",
	"playerd/internal/system",
}

// wiringPackages put everything together or test it, and may import
// anything: playerd's main, its tools and the tests' stand-ins.
var wiringPackages = []string{
	"internal/daemon/daemontest",
	"internal/hhnet",
	"playerd",
	"playerd/cmd/demomedia",
	"playerd/cmd/flood",
	"playerd/cmd/perfbench",
	"playerd/cmd/soak",
	"playerd/internal/clock/clocktest",
	"playerd/internal/decode/aac/aactest",
	"playerd/internal/decode/mp4/mp4test",
	"playerd/internal/demo",
	"playerd/internal/display/displaytest",
	"playerd/internal/input/inputtest",
	"playerd/internal/lang/langtest",
	"playerd/internal/mpris/dbustest",
	"playerd/internal/soakctl",
	"playerd/internal/testmedia",
	"playerd/internal/vmtest/alsa",
	"playerd/internal/vmtest/cards",
	"playerd/internal/vmtest/display",
	"playerd/internal/vmtest/pi",
}

// listDeps is every package of playerd and services/internal with its
// dependencies (transitive, without tests), by go list.
func listDeps(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-f", `{{.ImportPath}} {{join .Deps " "}}`,
		module+"playerd/...", module+"internal/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var deps []string
		for _, d := range f[1:] {
			if rel, ok := strings.CutPrefix(d, module); ok {
				deps = append(deps, rel)
			}
		}
		pkgs[strings.TrimPrefix(f[0], module)] = deps
	}
	return pkgs
}

// TestLayers fails when the core imports a surface, a surface imports
// another surface, a library imports a surface, or a package is in no
// set.
func TestLayers(t *testing.T) {
	pkgs := listDeps(t)
	surfaceOf := map[string]string{}
	class := map[string]string{}
	place := func(p, c string) {
		if old, ok := class[p]; ok {
			t.Errorf("%s is in two sets: %s and %s", p, old, c)
		}
		class[p] = c
	}
	for name, ps := range surfacePackages {
		for _, p := range ps {
			surfaceOf[p] = name
			place(p, "surface "+name)
		}
	}
	for _, p := range corePackages {
		place(p, "core")
	}
	for _, p := range libraryPackages {
		place(p, "library")
	}
	for _, p := range wiringPackages {
		place(p, "wiring")
	}
	for p := range class {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("%s is placed in a set but does not exist: take it out", p)
		}
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		c, ok := class[p]
		if !ok {
			t.Errorf("%s is in no set: place it in corePackages, surfacePackages, libraryPackages or wiringPackages", p)
			continue
		}
		if c == "wiring" {
			continue
		}
		own := surfaceOf[p]
		for _, d := range pkgs[p] {
			if s, ok := surfaceOf[d]; ok && s != own {
				t.Errorf("%s (%s) imports %s of the surface %q", p, c, d, s)
			}
		}
	}
}
