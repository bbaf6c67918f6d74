package mp3

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkDecode decodes music-like files made by lame (10 s, 44.1 kHz
// stereo) as the player does, and reports the process's CPU time (not the
// wall clock, which other work on the machine stretches) per second of
// audio, and allocations per frame; b.Loop repeats whole files.
func BenchmarkDecode(b *testing.B) {
	for _, f := range benchFiles(b) {
		b.Run(f.name, func(b *testing.B) {
			d, err := NewFile(bytes.NewReader(f.data), int64(len(f.data)))
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]float32, 4096)
			samples, frames := int64(0), int64(0)
			b.ReportAllocs()
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			cpu0 := processCPU()
			for b.Loop() {
				if err := d.SeekSample(0); err != nil {
					b.Fatal(err)
				}
				for {
					n, err := d.Read(buf)
					samples += int64(n / d.Channels())
					if err != nil {
						break
					}
				}
				frames += d.frame
			}
			cpu := processCPU() - cpu0
			runtime.ReadMemStats(&ms1)
			audio := float64(samples) / float64(d.SampleRate())
			b.ReportMetric(cpu.Seconds()/audio, "cpu-s/audio-s")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(frames), "allocs/frame")
			b.ReportMetric(0, "ns/op")
		})
	}
}

type benchFile struct {
	name string
	data []byte
}

var (
	benchOnce sync.Once
	benchData []benchFile
	benchErr  error
)

// benchFiles are 10 s of 128 kbit/s CBR and of -V 2 VBR.
func benchFiles(b *testing.B) []benchFile {
	lame, _ := needTools(b)
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mp3bench")
		if err != nil {
			benchErr = err
			return
		}
		defer os.RemoveAll(dir)
		wav := filepath.Join(dir, "src.wav")
		if benchErr = writeWAV(wav, 44100, 2, musicLike(44100, 2, 10, 42)); benchErr != nil {
			return
		}
		for _, v := range []struct{ name, arg, q string }{{"128k-cbr", "-b", "128"}, {"v2-vbr", "-V", "2"}} {
			path := filepath.Join(dir, v.name+".mp3")
			if benchErr = exec.Command(lame, "--quiet", v.arg, v.q, wav, path).Run(); benchErr != nil {
				return
			}
			data, err := os.ReadFile(path)
			if err != nil {
				benchErr = err
				return
			}
			benchData = append(benchData, benchFile{v.name, data})
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchData
}

// processCPU is the process's user and system time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Decoding allocates nothing once the decoder is made: not per frame, not
// per seek, not at the end of the stream.
func TestNoAllocationPerFrame(t *testing.T) {
	for _, f := range makeCorpus(t) {
		d := openFile(t, f.path)
		stereo := make([][2]float64, 1152)
		values := make([]float32, 1152*f.channels)
		if n := testing.AllocsPerRun(200, func() {
			if _, err := d.ReadStereo(stereo); err == io.EOF {
				if err := d.SeekSample(d.Length() / 3); err != nil {
					t.Fatal(err)
				}
			}
			d.Read(values)
		}); n != 0 {
			t.Errorf("%s: %.2f allocations per frame", f.name, n)
		}
	}
}
