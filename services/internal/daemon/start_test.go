package daemon

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

type testConfig struct {
	Socket string
	Port   int
	Every  time.Duration
	On     bool
	Hosts  []string
}

func (c testConfig) Validate() error {
	if c.Port < 1 {
		return fmt.Errorf("-port %d: want 1 or more", c.Port)
	}
	return nil
}

func testProgram(run func(context.Context, testConfig, *slog.Logger) error) Program[testConfig] {
	return Program[testConfig]{
		Name:    "testd",
		Env:     "TESTD",
		Default: testConfig{Socket: "/run/testd.sock", Port: 80, Every: time.Second},
		Flags: func(fs *flag.FlagSet, c *testConfig) {
			fs.StringVar(&c.Socket, "socket", c.Socket, "socket")
			fs.IntVar(&c.Port, "port", c.Port, "port")
			fs.DurationVar(&c.Every, "every-time", c.Every, "interval")
			fs.BoolVar(&c.On, "on", c.On, "switch")
			fs.Func("hosts", "names", func(v string) error {
				c.Hosts = strings.Split(v, ",")
				return nil
			})
		},
		Run: run,
	}
}

func TestParse(t *testing.T) {
	p := testProgram(nil)
	t.Setenv("TESTD_EVERY_TIME", "5s")
	t.Setenv("TESTD_ON", "true")
	t.Setenv("TESTD_PORT", "8080")
	t.Setenv("TESTD_HOSTS", "a,b")
	c, err := Parse(p, []string{"-port", "9"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The command line wins over the environment, which wins over the
	// default; Func flags take the environment too.
	want := testConfig{Socket: "/run/testd.sock", Port: 9, Every: 5 * time.Second, On: true, Hosts: []string{"a", "b"}}
	if fmt.Sprint(c) != fmt.Sprint(want) {
		t.Errorf("got %+v, want %+v", c, want)
	}
	if c, err := Parse(p, nil, nil); err != nil || c.Port != 8080 {
		t.Errorf("environment alone: %+v %v", c, err)
	}
}

// A malformed value in the environment is an error that names the
// variable, never a silent fallback to the default (which hatd and netd
// did before this package).
func TestParseStrictEnvironment(t *testing.T) {
	p := testProgram(nil)
	for name, v := range map[string]string{
		"TESTD_PORT":       "eighty",
		"TESTD_EVERY_TIME": "5",
		"TESTD_ON":         "yes please",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, v)
			_, err := Parse(p, nil, nil)
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%q: %v", name, v, err)
			}
			// Set on the command line, the flag's environment is not read.
			flagName := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "TESTD_"), "_", "-"))
			arg := map[string]string{"port": "1", "every-time": "1s", "on": "true"}[flagName]
			if _, err := Parse(p, []string{"-" + flagName + "=" + arg}, nil); err != nil {
				t.Errorf("-%s given: %v", flagName, err)
			}
		})
	}
}

func TestParseHelp(t *testing.T) {
	var help bytes.Buffer
	_, err := Parse(testProgram(nil), []string{"-h"}, &help)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	for _, want := range []string{"usage: testd [flags]", "interval (env TESTD_EVERY_TIME)", "(default 1s)"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, help.String())
		}
	}
}

func TestStartExitStatus(t *testing.T) {
	errRun := errors.New("broke")
	for _, tc := range []struct {
		name string
		args []string
		env  string
		run  error
		want int
		log  string
		runs bool
	}{
		{"clean stop", nil, "", nil, 0, "", true},
		{"help", []string{"-h"}, "", nil, 0, "", false},
		{"malformed flag", []string{"-port", "x"}, "", nil, ExitNoRestart, "configuration unusable", false},
		{"malformed environment", nil, "x", nil, ExitNoRestart, "TESTD_PORT", false},
		{"unknown flag", []string{"-nope"}, "", nil, ExitNoRestart, "configuration unusable", false},
		{"extra argument", []string{"x"}, "", nil, ExitNoRestart, "unexpected arguments", false},
		{"invalid", []string{"-port", "0"}, "", nil, ExitNoRestart, "-port 0", false},
		{"permanent", nil, "", Permanent(fmt.Errorf("no bus: %w", errRun)), ExitNoRestart, "cannot work here", true},
		{"failure", nil, "", fmt.Errorf("x: %w", errRun), 1, "testd stopped", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("TESTD_PORT", tc.env)
			}
			ran := false
			p := testProgram(func(ctx context.Context, c testConfig, log *slog.Logger) error {
				ran = true
				return tc.run
			})
			var out bytes.Buffer
			if code := Start(context.Background(), p, tc.args, &out); code != tc.want {
				t.Errorf("exit %d, want %d; log %s", code, tc.want, out.String())
			}
			if !strings.Contains(out.String(), tc.log) {
				t.Errorf("log %q lacks %q", out.String(), tc.log)
			}
			if ran != tc.runs {
				t.Errorf("ran %v", ran)
			}
		})
	}
}

func TestPermanent(t *testing.T) {
	base := errors.New("no bus")
	err := fmt.Errorf("hatd: %w", Permanent(base))
	if !IsPermanent(err) || !errors.Is(err, base) || err.Error() != "hatd: no bus" {
		t.Errorf("%v", err)
	}
	if IsPermanent(base) || Permanent(nil) != nil {
		t.Error("not marked")
	}
}

func TestEnvName(t *testing.T) {
	if got := EnvName("PLAYERD", "speech-program"); got != "PLAYERD_SPEECH_PROGRAM" {
		t.Error(got)
	}
}
