package main

import (
	"fmt"
	"io"
	"path/filepath"
	"syscall"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/decode"
)

// decodersAlone is the CPU that playerd's decoders alone spend per second of
// audio on the very files of the CPU figures: the floor under playing. The
// decoders' own benchmark (BenchmarkDecodeAlone) uses test tones, which
// decode faster than music-like sound with noise in it.
func decodersAlone(o options, media string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, f := range formats {
		paths, err := filepath.Glob(filepath.Join(media, "*"+f, "*."+f))
		if err != nil || len(paths) != 1 {
			return nil, fmt.Errorf("the %s track in %s: found %v", f, media, paths)
		}
		out[f], err = least(o.repeat, func() (float64, error) { return decodeCPU(paths[0]) })
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeCPU decodes path to the end and returns this process's CPU seconds
// per second of audio.
func decodeCPU(path string) (float64, error) {
	c0 := processCPU()
	st, format, err := decode.Open(path)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	buf := make([][2]float64, 4096)
	frames := 0
	for {
		n, ok := st.Stream(buf)
		frames += n
		if !ok {
			break
		}
	}
	if err := st.Err(); err != nil && err != io.EOF {
		return 0, err
	}
	if frames == 0 {
		return 0, fmt.Errorf("%s: no audio", path)
	}
	return (processCPU() - c0) / (float64(frames) / float64(format.SampleRate)), nil
}

// processCPU is this process's CPU time from getrusage, to the microsecond:
// cpuSeconds reads /proc in 10 ms ticks, coarse beside a FLAC file's 50 ms
// of decoding.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return (tv(ru.Utime) + tv(ru.Stime)).Seconds()
}
