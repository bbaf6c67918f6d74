// Command gomp3 decodes MP3 files with github.com/hajimehoshi/go-mp3, the
// decoder playerd used before its own, so that perfbench can set the two
// side by side. It is a module of its own: the box's module does not
// depend on go-mp3.
//
//	go run . -n 8 FILE...
//
// prints the CPU seconds per second of audio (the least of -repeat runs of
// decoding every file n times) and the allocations per frame.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"

	gomp3 "github.com/hajimehoshi/go-mp3"
)

func main() {
	n := flag.Int("n", 8, "times each file is decoded per run")
	repeat := flag.Int("repeat", 3, "runs; the least CPU is kept")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: gomp3 [-n N] [-repeat R] FILE...")
		os.Exit(2)
	}
	best, allocs := -1.0, 0.0
	for range max(*repeat, 1) {
		cpu, a, err := run(*n, flag.Args())
		if err != nil {
			fmt.Fprintln(os.Stderr, "gomp3:", err)
			os.Exit(1)
		}
		if best < 0 || cpu < best {
			best, allocs = cpu, a
		}
	}
	fmt.Printf("%.6f %.1f\n", best, allocs)
}

// run decodes each file n times, as playerd did: open, read every frame
// header for the length, decode to the end.
func run(n int, files []string) (cpuPerAudio, allocsPerFrame float64, err error) {
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	c0 := processCPU()
	audio, frames := 0.0, 0.0
	buf := make([]byte, 64<<10)
	for range n {
		for _, path := range files {
			f, err := os.Open(path)
			if err != nil {
				return 0, 0, err
			}
			d, err := gomp3.NewDecoder(f)
			if err != nil {
				f.Close()
				return 0, 0, err
			}
			bytes := 0
			for {
				k, err := d.Read(buf)
				bytes += k
				if err == io.EOF {
					break
				}
				if err != nil {
					f.Close()
					return 0, 0, err
				}
			}
			f.Close()
			samples := float64(bytes / 4) // 16-bit stereo
			audio += samples / float64(d.SampleRate())
			frames += samples / 1152
		}
	}
	cpu := processCPU() - c0
	runtime.ReadMemStats(&ms1)
	return cpu.Seconds() / audio, float64(ms1.Mallocs-ms0.Mallocs) / frames, nil
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
