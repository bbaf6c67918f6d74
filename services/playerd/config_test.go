package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/daemon"
)

func TestConfigValidate(t *testing.T) {
	valid := func() Config {
		c, err := daemon.Parse(program, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("defaults rejected: %v", err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		wants string // in the error; empty: accepted
	}{
		{"listen host and port", func(c *Config) { c.Listen = "127.0.0.1:8090" }, ""},
		{"listen any port", func(c *Config) { c.Listen = "[::1]:0" }, ""},
		{"listen without port", func(c *Config) { c.Listen = "127.0.0.1" }, "-listen"},
		{"listen port out of range", func(c *Config) { c.Listen = ":70000" }, "-listen"},
		{"listen empty", func(c *Config) { c.Listen = "" }, "-listen"},
		{"media empty", func(c *Config) { c.Media = "" }, "-media"},
		{"data empty", func(c *Config) { c.Data = "" }, "-data"},
		{"output wav", func(c *Config) { c.Output = "wav:out.wav" }, ""},
		{"output alsa card,dev", func(c *Config) { c.Output = "alsa:Headphones,0" }, ""},
		{"output unknown kind", func(c *Config) { c.Output = "pulse" }, "-output"},
		{"output wav without file", func(c *Config) { c.Output = "wav" }, "-output"},
		{"output alsa bad device", func(c *Config) { c.Output = "alsa:0,x" }, "-output"},
		{"output null with argument", func(c *Config) { c.Output = "null:x" }, "-output"},
		{"hat socket", func(c *Config) { c.Hat = "/run/hatd/hatd.sock" }, ""},
		{"hat socket too long", func(c *Config) { c.Hat = "/" + strings.Repeat("s", daemon.MaxSocketPath) }, "-hat"},
		{"speech remote", func(c *Config) { c.SpeechRemote = "http://192.168.1.5:59125/speak" }, ""},
		{"speech remote no scheme", func(c *Config) { c.SpeechRemote = "192.168.1.5:59125" }, "-speech-remote"},
		{"speech remote ftp", func(c *Config) { c.SpeechRemote = "ftp://host/x" }, "-speech-remote"},
		{"speech program missing is no error", func(c *Config) { c.SpeechProgram = "/nonexistent" }, ""},
		{"fb none", func(c *Config) { c.Display.FB = "none" }, ""},
		{"fb device", func(c *Config) { c.Display.FB = "/dev/fb1" }, ""},
		{"fb relative", func(c *Config) { c.Display.FB = "fb0" }, "-fb"},
		{"console empty", func(c *Config) { c.Display.Console = "" }, ""},
		{"console relative", func(c *Config) { c.Display.Console = "tty0" }, "-console"},
		{"touch device", func(c *Config) { c.Display.Touch = "/dev/input/event3" }, ""},
		{"touch word", func(c *Config) { c.Display.Touch = "yes" }, "-touch"},
		{"touch axes", func(c *Config) { c.Display.TouchAxes = "swap, invert-y" }, ""},
		{"touch axes unknown word", func(c *Config) { c.Display.TouchAxes = "swap,mirror" }, "-touch-axes"},
		{"input none", func(c *Config) { c.Input = "none" }, ""},
		{"input unknown", func(c *Config) { c.Input = "/dev/input/event0" }, "-input"},
		{"mpris session", func(c *Config) { c.MPRIS = "session" }, ""},
		{"mpris off", func(c *Config) { c.MPRIS = "off" }, ""},
		{"mpris system bus", func(c *Config) { c.MPRIS = "system" }, "-mpris"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.edit(&c)
			err := c.Validate()
			switch {
			case tc.wants == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tc.wants != "" && err == nil:
				t.Errorf("accepted %+v", c)
			case tc.wants != "" && !strings.Contains(err.Error(), tc.wants):
				t.Errorf("error %q does not name %s", err, tc.wants)
			}
		})
	}
}

func TestParseFlagsEnvironment(t *testing.T) {
	t.Setenv("PLAYERD_OUTPUT", "wav:x.wav")
	t.Setenv("PLAYERD_TOUCH_AXES", "swap")
	c, err := daemon.Parse(program, []string{"-listen", "127.0.0.1:1"}, nil)
	if err != nil || c.Output != "wav:x.wav" || c.Display.TouchAxes != "swap" || c.Listen != "127.0.0.1:1" {
		t.Errorf("%+v %v", c, err)
	}
}

// TestStartExitStatus runs main's body: configuration errors end with
// gokrazy's do-not-restart status and one log line, before anything starts.
func TestStartExitStatus(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	box := func(extra ...string) []string {
		return append([]string{"-listen", "127.0.0.1:0", "-media", t.TempDir(), "-data", t.TempDir(),
			"-fb", "none", "-touch", "none", "-console", "", "-speech-program", filepath.Join(dir, "none"),
			"-procs", "0"}, extra...) // 0: the test binary keeps its threads
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		args []string
		code int
		log  string // in the one line logged; empty: anything
	}{
		{"help", []string{"-h"}, 0, "-touch-axes"},
		{"unknown flag", box("-volume", "3"), daemon.ExitNoRestart, "-volume"},
		{"stray argument", box("extra"), daemon.ExitNoRestart, "unexpected arguments: extra"},
		{"bad output", box("-output", "speaker"), daemon.ExitNoRestart, "-output"},
		{"bad listen", box("-listen", "8090"), daemon.ExitNoRestart, "-listen"},
		{"bad touch axes", box("-touch-axes", "flip"), daemon.ExitNoRestart, "-touch-axes"},
		{"bad mpris", box("-mpris", "on"), daemon.ExitNoRestart, "-mpris"},
		{"bad procs", box("-procs", "-2"), daemon.ExitNoRestart, "-procs"},
		{"procs not a number", box("-procs", "two"), daemon.ExitNoRestart, "-procs"},
		// A data directory that cannot be made is a fault of the disk, not of
		// the configuration: playerd serves without saving (docs/faults.md).
		{"data directory cannot be made", box("-data", filepath.Join(notDir, "data")), 0, "data directory"},
		{"runs and stops", box(), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			code := daemon.Start(cancelled, program, tc.args, &out)
			if code != tc.code {
				t.Fatalf("exit status %d, want %d; output:\n%s", code, tc.code, out.String())
			}
			if tc.log == "" {
				return
			}
			if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); tc.code == daemon.ExitNoRestart && len(lines) != 1 {
				t.Errorf("configuration error told in %d lines:\n%s", len(lines), out.String())
			}
			if !strings.Contains(out.String(), tc.log) {
				t.Errorf("output does not mention %q:\n%s", tc.log, out.String())
			}
		})
	}
}

// TestREADMEListsEveryFlag keeps the README's flag list in step with
// playerd -h.
func TestREADMEListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	fs := flag.NewFlagSet("playerd", flag.ContinueOnError)
	flags(fs, &c)
	fs.VisitAll(func(f *flag.Flag) {
		if !bytes.Contains(readme, []byte("`-"+f.Name+"`")) {
			t.Errorf("README.md does not list -%s", f.Name)
		}
	})
}
