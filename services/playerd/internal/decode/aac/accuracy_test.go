package aac

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/decode/aac/aactest"
)

// TestAccuracy decodes ffmpeg-made ADTS files and compares the output with
// ffmpeg's own decoding, file by file (aactest.Corpus). A table of the
// results and of the coding tools each file used is logged.
func TestAccuracy(t *testing.T) {
	dir := t.TempDir()
	var table strings.Builder
	fmt.Fprintf(&table, "%-26s %-28s %10s %10s %8s  %s\n", "file", "tools", "RMS", "max", "SNR dB", "criterion")
	for _, c := range aactest.Corpus {
		path, ref := aactest.Make(t, dir, c, ".aac")
		got, tools := decodeADTSFile(t, path)
		if len(got) != len(ref) {
			t.Errorf("%s: %d samples, ffmpeg %d", c.Name, len(got), len(ref))
			continue
		}
		r := aactest.Compare(got, ref)
		crit := r.Criterion()
		if c.PNS && tools.noise == 0 {
			t.Errorf("%s: the encoder used no noise substitution", c.Name)
		}
		if crit == "" && tools.noise > 0 {
			// Noise is random by design: judged by its band energies.
			dev := aactest.BandDeviation(got, ref, c.Channels, c.Rate)
			crit = fmt.Sprintf("bands within %.2f dB", dev)
			if dev > 0.5 {
				t.Errorf("%s: band energies differ by up to %.2f dB from ffmpeg's", c.Name, dev)
			}
		}
		if crit == "" {
			t.Errorf("%s: RMS %.3g, max %.3g, SNR %.1f dB: meets no criterion", c.Name, r.RMS, r.Max, r.SNR)
		}
		fmt.Fprintf(&table, "%-26s %-28s %10.3g %10.3g %8.1f  %s\n", c.Name, tools, r.RMS, r.Max, r.SNR, crit)
	}
	t.Logf("accuracy against ffmpeg:\n%s", table.String())
}

// decodeADTSFile decodes a whole ADTS file into interleaved samples.
func decodeADTSFile(t *testing.T, path string) ([]float32, toolStats) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d *Decoder
	var out []float32
	for off := 0; off < len(data); {
		h, err := ParseADTS(data[off:])
		if err != nil {
			t.Fatalf("%s at %d: %v", path, off, err)
		}
		if d == nil {
			if d, err = NewDecoder(h.Config); err != nil {
				t.Fatal(err)
			}
		}
		pcm, err := d.Decode(data[off+h.HeaderLength : off+h.FrameLength])
		if err != nil {
			t.Fatalf("%s at %d: %v", path, off, err)
		}
		for i := range FrameSamples {
			for _, ch := range pcm {
				out = append(out, ch[i])
			}
		}
		off += h.FrameLength
	}
	return out, d.stats
}
