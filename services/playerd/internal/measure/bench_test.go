package measure

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/loudness"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// cpuTime is the process's user and system CPU time so far: the figures
// below are CPU time, which a loaded machine does not inflate as it does
// wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchFiles are 30 s of programme-like stereo 44.1 kHz audio (pink noise
// under a tone, loud, quiet and silent stretches) in each format the box
// plays, made by ffmpeg; nil without ffmpeg.
func benchFiles(b *testing.B) map[string]string {
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		b.Skip("ffmpeg is missing (Debian package ffmpeg)")
	}
	dir := b.TempDir()
	src := "anoisesrc=c=pink:r=44100:a=0.4:d=30:seed=3[n];sine=f=330:r=44100:d=30,volume=0.2[s];" +
		"[n][s]amix=inputs=2:normalize=0,volume='if(lt(mod(t\\,5)\\,3)\\,1\\,if(lt(mod(t\\,5)\\,4)\\,0.15\\,0))':eval=frame"
	files := map[string]string{}
	for _, f := range []struct {
		name, ext string
		codec     []string
	}{
		{"mp3", "mp3", []string{"-c:a", "libmp3lame", "-b:a", "128k"}},
		{"flac", "flac", []string{"-c:a", "flac"}},
		{"vorbis", "ogg", []string{"-c:a", "libvorbis", "-q:a", "4"}},
		{"opus", "opus", []string{"-c:a", "libopus", "-b:a", "96k"}},
		{"aac", "m4a", []string{"-c:a", "aac", "-b:a", "128k"}},
	} {
		path := filepath.Join(dir, "bench."+f.ext)
		args := append([]string{"-hide_banner", "-nostats", "-loglevel", "error", "-f", "lavfi", "-i", src, "-ac", "2"}, f.codec...)
		if out, err := exec.Command(ff, append(args, "-y", path)...).CombinedOutput(); err != nil {
			b.Fatalf("ffmpeg: %v\n%s", err, out)
		}
		files[f.name] = path
	}
	return files
}

// BenchmarkMeasureTrack is the cost of measuring a track against the cost
// of decoding it alone (the same decoder, into a buffer and nowhere
// else), and against ffmpeg's ebur128 filter on the same file: CPU ms per
// second of audio. "ratio" is measuring over decoding alone.
func BenchmarkMeasureTrack(b *testing.B) {
	files := benchFiles(b)
	for _, name := range []string{"mp3", "flac", "vorbis", "opus", "aac"} {
		path := files[name]
		b.Run(name, func(b *testing.B) {
			var decodeCPU, measureCPU time.Duration
			var audio float64
			for b.Loop() {
				c0 := cpuTime()
				s, format, err := decode.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				buf := make([][2]float64, 4410)
				frames := 0
				for {
					n, ok := s.Stream(buf)
					frames += n
					if !ok {
						break
					}
				}
				s.Close()
				c1 := cpuTime()
				s, format, err = decode.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := loudness.Measure(s, format, nil); err != nil {
					b.Fatal(err)
				}
				s.Close()
				c2 := cpuTime()
				decodeCPU += c1 - c0
				measureCPU += c2 - c1
				audio += float64(frames) / float64(format.SampleRate)
			}
			b.ReportMetric(float64(decodeCPU.Microseconds())/1e3/audio, "decode-cpu-ms/audio-s")
			b.ReportMetric(float64(measureCPU.Microseconds())/1e3/audio, "measure-cpu-ms/audio-s")
			b.ReportMetric(float64(measureCPU)/float64(decodeCPU), "ratio")
			if ff, err := exec.LookPath("ffmpeg"); err == nil {
				cmd := exec.Command(ff, "-nostats", "-i", path, "-filter_complex", "ebur128=peak=true", "-f", "null", "-")
				if err := cmd.Run(); err == nil {
					cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
					b.ReportMetric(float64(cpu.Microseconds())/1e3/(audio/float64(b.N)), "ffmpeg-ebur128-cpu-ms/audio-s")
				}
			}
		})
	}
}

// BenchmarkLibraryPass is a whole pass over a library like the test-pi's
// generated one (tracks of 10 ms in albums of 20: the cost per file, not
// per second of audio), through the worker: stat, key, open, measure,
// keep, save. CPU ms per track; times 10,000 for that library.
func BenchmarkLibraryPass(b *testing.B) {
	const tracks = 400
	media := b.TempDir()
	tiny := testmedia.WAV(8000, make([][2]int16, 80))
	for i := range tracks {
		dir := filepath.Join(media, fmt.Sprintf("Hörspielreihe %03d", i/20+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("Folge %02d.wav", i%20+1)), tiny, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	lib := library.New(media, "", nil)
	if _, err := lib.Scan(); err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	for b.Loop() {
		store := Open(filepath.Join(b.TempDir(), "loudness.json"))
		w := New(Config{Library: lib, Store: store})
		c0 := cpuTime()
		if err := w.pass(context.Background(), make(chan struct{})); err != nil {
			b.Fatal(err)
		}
		if err := store.save(); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - c0
		if p := store.Progress(); p.Measured != tracks {
			b.Fatalf("%+v", p)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N*tracks), "cpu-ms/track")
}
