package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/decode/mp3"
)

// mp3Decoders are the MP3 decoders alone on the benchmark's MP3 track,
// CPU seconds per audio second (the least of o.repeat runs, each decoding
// the track mp3Passes times) and allocations per frame: ours as playerd
// calls it; go-mp3, playerd's before, from a module of its own
// (cmd/perfbench/gomp3); Debian's mpg123 -t as built (SIMD) and with
// --cpu generic, its portable C.
type mp3Decoders struct {
	ours, oursAllocs   float64
	gomp3, gomp3Allocs float64 // 0: not measured
	mpg123, generic    float64
}

const mp3Passes = 8

func measureMP3Decoders(o options, media string) (*mp3Decoders, error) {
	paths, err := filepath.Glob(filepath.Join(media, "*mp3", "*.mp3"))
	if err != nil || len(paths) != 1 {
		return nil, fmt.Errorf("the mp3 track in %s: found %v", media, paths)
	}
	path := paths[0]
	var r mp3Decoders
	r.ours, err = least(o.repeat, func() (float64, error) {
		cpu, allocs, err := decodeOurs(path)
		r.oursAllocs = allocs
		return cpu, err
	})
	if err != nil {
		return nil, err
	}
	seconds, err := trackSeconds(path)
	if err != nil {
		return nil, err
	}
	for _, v := range []struct {
		dst  *float64
		args []string
	}{{&r.mpg123, nil}, {&r.generic, []string{"--cpu", "generic"}}} {
		args := append(append([]string{"-q", "-t"}, v.args...), repeatArg(path, mp3Passes)...)
		*v.dst, err = least(o.repeat, func() (float64, error) {
			cpu, err := childCPU(exec.Command("mpg123", args...))
			return cpu / (seconds * mp3Passes), err
		})
		if err != nil {
			return nil, fmt.Errorf("mpg123: %w", err)
		}
	}
	if o.gomp3 != "" {
		cmd := exec.Command("go", "run", ".", "-n", fmt.Sprint(mp3Passes), "-repeat", fmt.Sprint(o.repeat), path)
		cmd.Dir = o.gomp3
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go-mp3 (%s): %w", o.gomp3, err)
		}
		if _, err := fmt.Sscan(string(out), &r.gomp3, &r.gomp3Allocs); err != nil {
			return nil, fmt.Errorf("go-mp3 said %q: %w", out, err)
		}
	}
	return &r, nil
}

// decodeOurs decodes the file mp3Passes times as playerd does (its own
// reads, into float64 stereo for the player) and returns this process's
// CPU per audio second and the allocations per frame.
func decodeOurs(path string) (float64, float64, error) {
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	c0 := processCPU()
	buf := make([][2]float64, 4096)
	audio, frames := 0.0, 0.0
	for range mp3Passes {
		f, err := os.Open(path)
		if err != nil {
			return 0, 0, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return 0, 0, err
		}
		d, err := mp3.NewFile(f, st.Size())
		if err != nil {
			f.Close()
			return 0, 0, err
		}
		n := 0
		for {
			k, err := d.ReadStereo(buf)
			n += k
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return 0, 0, err
			}
		}
		f.Close()
		audio += float64(n) / float64(d.SampleRate())
		frames += float64(n) / 1152
	}
	cpu := processCPU() - c0
	runtime.ReadMemStats(&ms1)
	return cpu / audio, float64(ms1.Mallocs-ms0.Mallocs) / frames, nil
}

func trackSeconds(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	info, err := mp3.Inspect(f, st.Size())
	if err != nil {
		return 0, err
	}
	return float64(info.Samples) / float64(info.SampleRate), nil
}

func repeatArg(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// childCPU runs cmd and returns its CPU seconds (user and system).
func childCPU(cmd *exec.Cmd) (float64, error) {
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%w: %s", err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, fmt.Errorf("no resource usage for %s", cmd.Path)
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return (tv(ru.Utime) + tv(ru.Stime)).Seconds(), nil
}

// print writes the comparison as the Markdown table docs/performance.md keeps.
func (r *mp3Decoders) print(w io.Writer) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| MP3 decoder alone, same file | CPU s per audio s | allocations per frame (opening the file included) |")
	fmt.Fprintln(w, "|---|---|---|")
	fmt.Fprintf(w, "| ours (internal/decode/mp3) | %.4f | %.1f |\n", r.ours, r.oursAllocs)
	if r.gomp3 > 0 {
		fmt.Fprintf(w, "| go-mp3 v0.3.4 (before) | %.4f | %.1f |\n", r.gomp3, r.gomp3Allocs)
	}
	fmt.Fprintf(w, "| mpg123 -t (SIMD) | %.4f | |\n", r.mpg123)
	fmt.Fprintf(w, "| mpg123 -t --cpu generic | %.4f | |\n", r.generic)
	var s []string
	if r.gomp3 > 0 {
		s = append(s, fmt.Sprintf("ours / go-mp3 %.2f", r.ours/r.gomp3))
	}
	s = append(s, fmt.Sprintf("ours / mpg123 generic %.2f", r.ours/r.generic), fmt.Sprintf("ours / mpg123 SIMD %.2f", r.ours/r.mpg123))
	fmt.Fprintf(w, "\n%s.\n", strings.Join(s, ", "))
}
