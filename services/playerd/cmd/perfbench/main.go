// perfbench measures a real playerd process the way issue 21 states its
// figures, and, given -mpd, Debian's MPD on the same files in the same run:
//
//   - CPU seconds per audio second while playing MP3, FLAC and Vorbis into a
//     paced output (playerd: the wav sink; MPD: a FIFO output, once resampling
//     to 48 kHz and once at the file's own rate);
//   - server CPU per status request (GET /api/status; MPD's status command);
//   - command → first audible sample in the output (FLAC and MP3);
//   - the MP3 decoders alone on the MP3 track: ours, go-mp3 (from the module
//     of cmd/perfbench/gomp3, so the box's does not depend on it) and
//     Debian's mpg123 -t with and without --cpu generic, CPU per audio
//     second and allocations per frame;
//   - with -library N: the first scan of a never-scanned library of N tracks
//     (80 % MP3 128k CBR with ID3v2 and LAME header, 20 % FLAC), the time to
//     the first API answer, and idle anonymous RSS with that library.
//
// CPU comes from /proc/PID/stat (utime+stime), so the figures are the whole
// process's, not the decoder's.
//
//	go build -o /tmp/playerd ./services/playerd
//	go run ./services/playerd/cmd/perfbench -playerd /tmp/playerd -mpd /usr/bin/mpd -library 10000
//
// The test tracks are made with sox, lame, flac, metaflac, oggenc and ffmpeg
// (Debian packages sox, lame, flac, vorbis-tools, ffmpeg: its AAC encoder);
// mpg123 is Debian's mpg123.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type options struct {
	playerd, mpd string
	baseline     string // an older playerd, for before/after figures
	seconds      int    // length of each playing test track
	repeat       int    // each CPU figure is the least of this many runs
	statusN      int
	firstN       int
	library      int    // tracks in the scan library; 0 skips the scan figures
	libDir       string // where the scan library is made once and kept
	gomp3        string // the go-mp3 helper's module directory; "" skips it
}

func main() {
	var o options
	flag.StringVar(&o.playerd, "playerd", "", "the playerd binary to measure")
	flag.StringVar(&o.baseline, "baseline", "", "an older playerd build to measure first, for before/after figures (optional)")
	flag.StringVar(&o.mpd, "mpd", "", "an mpd binary to measure beside it (optional)")
	flag.IntVar(&o.seconds, "seconds", 15, "length of each test track")
	flag.IntVar(&o.repeat, "repeat", 3, "runs of each CPU figure; the least is kept (see least)")
	flag.IntVar(&o.statusN, "status", 3000, "status requests for the status figure")
	flag.IntVar(&o.firstN, "first", 5, "folder commands for the first-sample figure")
	flag.IntVar(&o.library, "library", 0, "tracks in the scan library (0: no scan figures)")
	flag.StringVar(&o.libDir, "libdir", filepath.Join(os.TempDir(), "perfbench-library"), "where the scan library is made and kept between runs")
	flag.StringVar(&o.gomp3, "gomp3", "services/playerd/cmd/perfbench/gomp3", "module directory of the go-mp3 helper, to compare the MP3 decoders (\"\" skips it)")
	flag.Parse()
	if o.playerd == "" {
		fmt.Fprintln(os.Stderr, "usage: perfbench -playerd BIN [-mpd BIN] [-seconds N] [-library N]")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "perfbench:", err)
		os.Exit(1)
	}
}

var formats = []string{"mp3", "flac", "ogg", "m4a"}

// idleWait is how long after stopping idle memory is read, for both
// programs: playerd hands back what playing left behind at its first idle
// check, which comes every 15 s.
const idleWait = 20 * time.Second

// figures is what one program measured; a zero field was not measured.
type figures struct {
	cpu       map[string]float64 // CPU s per audio s by format
	cpuNative map[string]float64 // MPD only: at the file's own rate
	statusUS  float64            // server CPU µs per status request
	first     []float64          // ms, FLAC
	firstMP3  []float64          // ms
	ready     time.Duration      // start → first API answer, never-scanned library
	scan      time.Duration      // start → first scan complete
	rssMB     float64            // idle anonymous RSS with the scan library (or the small one)
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "perfbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	media := filepath.Join(dir, "media")
	if err := makeMedia(media, o.seconds); err != nil {
		return err
	}
	var lib string
	if o.library > 0 {
		lib = filepath.Join(o.libDir, fmt.Sprint(o.library))
		if err := makeLibrary(lib, o.library); err != nil {
			return err
		}
		// The playing folders live beside the big library, so idle RSS is
		// measured with everything loaded.
		for _, f := range formats {
			if err := os.Rename(filepath.Join(media, f), filepath.Join(lib, "zz-bench-"+f)); err != nil && !os.IsExist(err) {
				return err
			}
		}
		defer func() {
			for _, f := range formats {
				os.RemoveAll(filepath.Join(lib, "zz-bench-"+f))
			}
		}()
		media = lib
		if err := warmCache(lib); err != nil {
			return err
		}
	}

	alone, err := decodersAlone(o, media)
	if err != nil {
		return fmt.Errorf("decoders alone: %w", err)
	}
	fmt.Printf("the decoders alone on these files: %s CPU s per audio s\n", perFormatOf(alone))
	if _, err := os.Stat(filepath.Join(o.gomp3, "go.mod")); o.gomp3 != "" && err != nil {
		fmt.Printf("no go-mp3 helper at %s (run from the repository's root): go-mp3 left out\n", o.gomp3)
		o.gomp3 = ""
	}
	decoders, err := measureMP3Decoders(o, media)
	if err != nil {
		return fmt.Errorf("MP3 decoders: %w", err)
	}

	var before *figures
	if o.baseline != "" {
		fmt.Println("== playerd before:", o.baseline)
		if before, err = measurePlayerd(o, o.baseline, filepath.Join(dir, "before"), media); err != nil {
			return fmt.Errorf("baseline playerd: %w", err)
		}
	}
	fmt.Println("== playerd:", o.playerd)
	pd, err := measurePlayerd(o, o.playerd, filepath.Join(dir, "playerd"), media)
	if err != nil {
		return fmt.Errorf("playerd: %w", err)
	}
	var md *figures
	if o.mpd != "" {
		fmt.Println("== mpd")
		md, err = measureMPD(o, dir, media)
		if err != nil {
			return fmt.Errorf("mpd: %w", err)
		}
	}
	printTable(os.Stdout, o, before, pd, md)
	var share []string
	for _, f := range formats {
		share = append(share, fmt.Sprintf("%.0f %%", 100*alone[f]/pd.cpu[f]))
	}
	fmt.Printf("\nThe decoders alone on the same files, CPU s per audio s, MP3 / FLAC / Vorbis / AAC (M4A): %s (%s of playerd's figure).\n",
		perFormatOf(alone), strings.Join(share, " / "))
	decoders.print(os.Stdout)
	return nil
}

// perFormatOf prints a figure per format, MP3 / FLAC / Vorbis / AAC.
func perFormatOf(v map[string]float64) string {
	var s []string
	for _, f := range formats {
		s = append(s, fmt.Sprintf("%.4f", v[f]))
	}
	return strings.Join(s, " / ")
}

func measurePlayerd(o options, bin, dir, media string) (*figures, error) {
	fig := &figures{cpu: map[string]float64{}}
	if err := measureServing(o, fig, bin, dir, media); err != nil {
		return nil, err
	}
	if err := measurePlaying(o, fig, bin, dir+"-null", media); err != nil {
		return nil, err
	}
	return fig, nil
}

// measureServing takes the figures of a playerd writing a WAV file: start and
// first scan, status CPU, first sample (read from the file), idle memory.
func measureServing(o options, fig *figures, bin, dir, media string) error {
	p, err := startPlayerd(bin, dir, media, true)
	if err != nil {
		return err
	}
	defer p.stop()
	fig.ready = p.ready
	if err := p.waitScanned(); err != nil {
		return err
	}
	fig.scan = p.scanned
	fmt.Printf("first API answer %.0f ms, first scan done %.2f s\n", ms(fig.ready), fig.scan.Seconds())
	ids, err := p.folders()
	if err != nil {
		return err
	}
	fig.statusUS, err = least(o.repeat, func() (float64, error) {
		c0 := p.cpu()
		for range o.statusN {
			if _, err := p.get("/api/status"); err != nil {
				return 0, err
			}
		}
		return (p.cpu() - c0) / float64(o.statusN) * 1e6, nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("server CPU per GET /api/status: %.1f µs (%d requests, keep-alive)\n", fig.statusUS, o.statusN)

	if fig.first, err = firstSamples(o, func() (time.Duration, error) { return p.firstSample(ids["flac"]) }); err != nil {
		return err
	}
	fmt.Printf("folder command → first audible sample: %s ms\n", joinMS(fig.first))
	if fig.firstMP3, err = firstSamples(o, func() (time.Duration, error) { return p.firstSample(ids["mp3"]) }); err != nil {
		return err
	}
	fmt.Printf("same, MP3: %s ms\n", joinMS(fig.firstMP3))
	if _, err := p.command(`{"action":"stop"}`); err != nil {
		return err
	}
	time.Sleep(idleWait)
	fig.rssMB = anonymousRSS(p.cmd.Process.Pid) / 1e6
	fmt.Printf("idle anonymous RSS: %.1f MB\n", fig.rssMB)
	return nil
}

// measurePlaying takes the CPU figures of a playerd on the null output.
func measurePlaying(o options, fig *figures, bin, dir, media string) error {
	p, err := startPlayerd(bin, dir, media, false)
	if err != nil {
		return err
	}
	defer p.stop()
	if err := p.waitScanned(); err != nil {
		return err
	}
	settle(p.cmd.Process.Pid)
	ids, err := p.folders()
	if err != nil {
		return err
	}
	for _, f := range formats {
		fig.cpu[f], err = least(o.repeat, func() (float64, error) {
			if _, err := p.command(`{"action":"stop"}`); err != nil {
				return 0, err
			}
			c0 := p.cpu()
			if err := p.playToEnd(fmt.Sprintf(`{"action":"folder","folder_id":%q}`, ids[f]), time.Duration(o.seconds+30)*time.Second); err != nil {
				return 0, err
			}
			return (p.cpu() - c0) / float64(o.seconds), nil
		})
		if err != nil {
			return err
		}
		fmt.Printf("CPU per audio second, %s: %.4f s/s (null output)\n", f, fig.cpu[f])
	}
	return nil
}

// least runs a CPU measurement n times and keeps the least. On this shared
// virtual machine a process's system calls and wakeups sometimes cost 2-3×
// for 10-20 s at a time (a CPU profile shows netpollBreak and epoll_wait,
// not our code, growing); the least of a few runs is the program's own cost.
func least(n int, measure func() (float64, error)) (float64, error) {
	best := -1.0
	for range max(n, 1) {
		v, err := measure()
		if err != nil {
			return 0, err
		}
		if best < 0 || v < best {
			best = v
		}
	}
	return best, nil
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// firstSamples takes o.firstN first-sample figures, in ms.
func firstSamples(o options, first func() (time.Duration, error)) ([]float64, error) {
	var out []float64
	for range o.firstN {
		d, err := first()
		if err != nil {
			return nil, err
		}
		out = append(out, ms(d))
	}
	return out, nil
}

func joinMS(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(s, " / ")
}
