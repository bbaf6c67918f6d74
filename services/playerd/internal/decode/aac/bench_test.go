package aac

import (
	"bytes"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/decode/aac/aactest"
)

// benchCase is the file of the speed comparison: a minute of 128 kbit/s
// stereo AAC-LC at 44.1 kHz, music-like (a tone over pink noise).
var benchCase = aactest.Case{
	Name:     "bench-44k-stereo-128k",
	Source:   aactest.Corpus[0].Source,
	Rate:     44100,
	Channels: 2,
	Bitrate:  "128k",
	Seconds:  60,
}

// BenchmarkDecode reports the decoder's CPU per second of audio (this
// process's user+system time over the loop) beside ffmpeg's on the same
// ADTS file (ffmpeg-s/audio-s, its user+system time
// decoding to nothing, best of three, including its start-up), and their
// ratio; the target is at most 4.
func BenchmarkDecode(b *testing.B) {
	path, data, frames, d := adtsCase(b, benchCase)
	h, _ := ParseADTS(data)
	audio := float64(len(frames)*FrameSamples) / float64(h.SampleRate)
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		d.Reset()
		for _, f := range frames {
			if _, err := d.Decode(f); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	// CPU time, as for ffmpeg: wall time on a busy machine would count
	// the other processes' turns.
	ours := (cpuTime(b) - cpu0) / float64(b.N) / audio
	// ffmpeg decodes the file ten times over in one run (ADTS frames stand
	// alone, so the copies make one valid stream), so that its start-up
	// weighs little.
	long := path + ".x10.aac"
	if err := os.WriteFile(long, bytes.Repeat(data, 10), 0o644); err != nil {
		b.Fatal(err)
	}
	ff := ffmpegCPU(b, long) / (10 * audio)
	b.ReportMetric(ours*1e3, "ms/audio-s")
	b.ReportMetric(ff*1e3, "ffmpeg-ms/audio-s")
	b.ReportMetric(ours/ff, "x-ffmpeg")
}

// cpuTime is this process's user and system time, in seconds.
func cpuTime(tb testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// ffmpegCPU is the least CPU time of three runs of ffmpeg decoding path.
func ffmpegCPU(b *testing.B, path string) float64 {
	best := 0.0
	for range 3 {
		cmd := exec.Command(aactest.FFmpeg(b), "-nostdin", "-loglevel", "error", "-threads", "1", "-i", path, "-f", "null", "-")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("ffmpeg: %v\n%s", err, out)
		}
		cpu := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
		if best == 0 || cpu < best {
			best = cpu
		}
	}
	return max(best, float64(time.Millisecond)/1e9)
}

// adtsCase makes a case's ADTS file and a decoder for it: the file's path,
// its bytes and its frames.
func adtsCase(tb testing.TB, c aactest.Case) (string, []byte, [][]byte, *Decoder) {
	path, _ := aactest.Make(tb, tb.TempDir(), c, ".aac")
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	frames := splitADTS(tb, data)
	h, _ := ParseADTS(data)
	d, err := NewDecoder(h.Config)
	if err != nil {
		tb.Fatal(err)
	}
	return path, data, frames, d
}

// splitADTS cuts an ADTS stream into its frames' raw data blocks.
func splitADTS(tb testing.TB, data []byte) [][]byte {
	var frames [][]byte
	for off := 0; off < len(data); {
		h, err := ParseADTS(data[off:])
		if err != nil {
			tb.Fatalf("at %d: %v", off, err)
		}
		frames = append(frames, data[off+h.HeaderLength:off+h.FrameLength])
		off += h.FrameLength
	}
	return frames
}

// TestNoAllocations: decoding a frame allocates nothing once the decoder
// exists.
func TestNoAllocations(t *testing.T) {
	_, _, frames, d := adtsCase(t, aactest.Corpus[1])
	i := 0
	allocs := testing.AllocsPerRun(len(frames), func() {
		if _, err := d.Decode(frames[i%len(frames)]); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per frame", allocs)
	}
}
