// Command soak runs the real playerd (its soak build, with hatd -sim and
// netd) under a randomized, seeded mix of everything a box meets in a
// household, for a given time, and checks it all the while: no 5xx except
// 503 and 429 with Retry-After, every acknowledged change still there after
// each SIGKILL, the pollers' status p99, and at the end no upward trend in
// goroutines, open files, heap and RSS. docs/reliability.md describes the
// mix, the checks and a 2-hour run's figures.
//
//	go run ./services/playerd/cmd/soak -seed 1 -duration 4m -out build/soak \
//	    -playerd bin/soak/playerd -hatd bin/hatd -netd bin/netd
//
// It needs root: the radio station lives in a network namespace of its own
// behind a veth pair, and netd runs in another.
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
	"path/filepath"
	"syscall"
	"time"

	_ "time/tzdata" // the parental rules' windows are computed in the box's zone
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := start(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

func start(ctx context.Context, args []string, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			a.Value = slog.StringValue(a.Value.Time().Format("15:04:05.000"))
		}
		return a
	}}))
	cfg, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = cfg.validate()
	}
	if err != nil {
		fmt.Fprintln(stderr, "soak:", err)
		return 2
	}
	ok, err := run(ctx, cfg, log)
	if err != nil {
		log.Error("soak could not run", "error", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

// config is the soak's command line.
type config struct {
	seed     uint64
	duration time.Duration
	out      string // results: report.md, samples.csv, plots, the daemons' logs
	docs     string // docs/reliability.md to write the figures into; empty: don't

	playerd, hatd, netd string // the binaries (playerd built with -tags soaktest)
	speech              string // directory of storybox-speak and its data; empty: no voice
	stationMP3          string // an MP3 file the radio station loops
	memLimit            string // playerd's GOMEMLIMIT, as on the box

	// The resource trends are fitted to the run's long life, warmUp after
	// its start.
	warmUp time.Duration
	// killEvery is the mean time between SIGKILLs, which come at random
	// moments in the first killPhase of the run; the rest is one life, the
	// long one a slow leak shows in.
	killEvery time.Duration
	// sampleEvery is how often goroutines, heap, files and RSS are read.
	sampleEvery time.Duration
	bounds      bounds
}

// bounds are what the soak holds playerd to.
type bounds struct {
	p99        time.Duration // the pollers' status requests
	goroutines float64       // per hour
	files      float64       // per hour
	heapMiB    float64       // heap in use, MiB per hour
	rssMiB     float64       // MiB per hour
}

// allowances are how much a resource may rise over a short run's long life
// (trend.pass): a few connections and streams, the heap growing to its
// working size.
var allowances = struct{ goroutines, files, heapMiB, rssMiB float64 }{goroutines: 10, files: 6, heapMiB: 16, rssMiB: 24}

func parseFlags(args []string) (config, error) {
	c := config{}
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the mix: the same seed makes the same choices")
	fs.DurationVar(&c.duration, "duration", 4*time.Minute, "how long the mix runs")
	fs.StringVar(&c.out, "out", "build/soak", "directory for the report, samples, plots and logs (emptied first)")
	fs.StringVar(&c.docs, "docs", "", "also write the figures and plots into this markdown file (docs/reliability.md) between its soak markers")
	fs.StringVar(&c.playerd, "playerd", "bin/soak/playerd", "playerd built with -tags soaktest")
	fs.StringVar(&c.hatd, "hatd", "bin/hatd", "hatd (runs with -sim)")
	fs.StringVar(&c.netd, "netd", "bin/netd", "netd (runs in a network namespace without Wi-Fi)")
	fs.StringVar(&c.speech, "speech", "", "directory with storybox-speak and data/ (build/speech/<arch>); empty: announcements answer 503")
	fs.StringVar(&c.stationMP3, "station-mp3", "services/playerd/internal/decode/testdata/tone.mp3", "MP3 file the radio station loops")
	fs.StringVar(&c.memLimit, "memlimit", "128MiB", "playerd's GOMEMLIMIT (the image's)")
	fs.DurationVar(&c.warmUp, "warm-up", 0, "time after the long life's start left out of the trends; 0: duration/40, 30 s to 3 min")
	fs.DurationVar(&c.killEvery, "kill-every", 0, "mean time between SIGKILLs of playerd, in the first 60% of the run; 0: duration/20, at least 30 s")
	fs.DurationVar(&c.sampleEvery, "sample-every", 0, "how often resources are read; 0: 2 s for runs under 30 min, else 5 s")
	fs.DurationVar(&c.bounds.p99, "p99", 100*time.Millisecond, "bound of the pollers' status p99")
	fs.Float64Var(&c.bounds.goroutines, "max-goroutines-per-hour", 20, "bound of the goroutines' slope")
	fs.Float64Var(&c.bounds.files, "max-files-per-hour", 10, "bound of the open files' slope")
	fs.Float64Var(&c.bounds.heapMiB, "max-heap-mib-per-hour", 2, "bound of the heap in use's slope, MiB")
	fs.Float64Var(&c.bounds.rssMiB, "max-rss-mib-per-hour", 4, "bound of the RSS's slope, MiB")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.killEvery == 0 {
		c.killEvery = max(c.duration/20, 30*time.Second)
	}
	if c.warmUp == 0 {
		c.warmUp = min(max(c.duration/40, 30*time.Second), 3*time.Minute)
	}
	if c.sampleEvery == 0 {
		c.sampleEvery = 2 * time.Second
		if c.duration >= 30*time.Minute {
			c.sampleEvery = 5 * time.Second
		}
	}
	return c, nil
}

func (c config) validate() error {
	if c.duration < 30*time.Second {
		return errors.New("-duration: at least 30s")
	}
	if c.out == "" {
		return errors.New("-out is empty")
	}
	for flag, p := range map[string]string{"-playerd": c.playerd, "-hatd": c.hatd, "-netd": c.netd, "-station-mp3": c.stationMP3} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	if c.speech != "" {
		if _, err := os.Stat(filepath.Join(c.speech, "storybox-speak")); err != nil {
			return fmt.Errorf("-speech: %w", err)
		}
	}
	if os.Geteuid() != 0 {
		return errors.New("needs root: the radio station and netd run in network namespaces (ip netns)")
	}
	return nil
}
