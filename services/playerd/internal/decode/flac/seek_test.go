package flac

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// readN decodes n samples per channel (fewer at the end), interleaved.
func readN(t *testing.T, d *Decoder, n int) []int32 {
	t.Helper()
	var pcm []int32
	for n > 0 {
		fr, err := d.Frame()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		k := min(n, len(fr[0]))
		for i := range k {
			for _, ch := range fr {
				pcm = append(pcm, ch[i])
			}
		}
		n -= k
	}
	return pcm
}

// checkSeeks seeks d to targets and compares what follows with ref.
func checkSeeks(t *testing.T, d *Decoder, ref []int32, channels int, targets []int) {
	t.Helper()
	frames := len(ref) / channels
	for _, s := range targets {
		if err := d.Seek(uint64(s)); err != nil {
			t.Fatalf("seek %d: %v", s, err)
		}
		if d.Position() != uint64(s) {
			t.Fatalf("seek %d: position %d", s, d.Position())
		}
		got := readN(t, d, 3000)
		end := min(frames, s+3000)
		want := ref[s*channels : end*channels]
		if !sameSamples(got, want) {
			t.Fatalf("after seek to %d: %s", s, firstDiff(got, want))
		}
	}
}

func seekTargets(frames int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 1))
	ts := []int{0, frames - 1, frames / 2, 4096, 4095, 1152, 1}
	for range 25 {
		ts = append(ts, rng.IntN(frames))
	}
	return ts
}

// TestSeek seeks through a SEEKTABLE, by bisection without one, and in
// streams of variable block sizes, to the sample.
func TestSeek(t *testing.T) {
	requireFLAC(t)
	s := signal{44100, 2, 16, 200000, "music"}
	for _, args := range [][]string{{"-5", "-S", "20x"}, {"-5", "-S", "-"}, {"-0", "-S", "-", "-b", "576"}, {"-8", "-S", "3x"}} {
		t.Run(args[len(args)-1], func(t *testing.T) {
			file, ref := encode(t, s, args...)
			d := openFile(t, file)
			if (args[2] == "-") != (len(d.seek) == 0) {
				t.Fatalf("%d seek points with %v", len(d.seek), args)
			}
			checkSeeks(t, d, ref, s.channels, seekTargets(s.frames, 1))
		})
	}
	for _, c := range crafted[:2] {
		t.Run(c.name, func(t *testing.T) {
			data, sig := c.c.encode()
			var ref []int32
			for i := range sig[0] {
				for ch := range sig {
					ref = append(ref, int32(sig[ch][i]))
				}
			}
			file := filepath.Join(t.TempDir(), "x.flac")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			checkSeeks(t, openFile(t, file), ref, len(sig), seekTargets(len(sig[0]), 2))
		})
	}
}

// TestSeekSkip compares a seek with flac -d --skip.
func TestSeekSkip(t *testing.T) {
	requireFLAC(t)
	s := signal{96000, 2, 24, 150000, "music"}
	file, _ := encode(t, s, "-8", "-S", "-")
	d := openFile(t, file)
	for _, skip := range []int{12345, 99999, 147000} {
		ref := filepath.Join(t.TempDir(), "skip.raw")
		out, err := exec.Command("flac", "-s", "-f", "-d", "--force-raw-format", "--endian=little", "--sign=signed",
			"--skip="+strconv.Itoa(skip), "--until=+2000", "-o", ref, file).CombinedOutput()
		if err != nil {
			t.Fatalf("flac -d --skip: %v\n%s", err, out)
		}
		want, err := readRaw(ref, s.bps)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Seek(uint64(skip)); err != nil {
			t.Fatal(err)
		}
		if got := readN(t, d, len(want)/2); !sameSamples(got, want) {
			t.Fatalf("skip %d: %s", skip, firstDiff(got, want))
		}
	}
}

// TestUnknownLength: a stream whose STREAMINFO leaves the total unknown (a
// live encoder's) has the length of its frames, decodes whole and seeks.
func TestUnknownLength(t *testing.T) {
	requireFLAC(t)
	s := signal{44100, 2, 16, 50000, "music"}
	file, ref := encode(t, s, "-5", "-S", "-")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	data[8+13] &= 0xF0
	clear(data[8+14 : 8+18])
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	d := openFile(t, file)
	if n, err := d.Length(); err != nil || n != uint64(s.frames) {
		t.Fatalf("length %d (%v), want %d", n, err, s.frames)
	}
	checkSeeks(t, d, ref, s.channels, seekTargets(s.frames, 3))
	if err := d.Seek(0); err != nil {
		t.Fatal(err)
	}
	if got, _, err := decodeAll(d); err != nil || !sameSamples(got, ref) {
		t.Fatalf("%v: %s", err, firstDiff(got, ref))
	}
}
