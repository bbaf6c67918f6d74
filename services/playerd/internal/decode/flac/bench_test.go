package flac

import (
	"errors"
	"io"
	"os"
	"testing"
)

// BenchmarkDecode decodes a file of 10 s; CPU s per audio s is ns/op ÷ 1e10.
// allocs/op counts the whole file's decoding: the opening's buffers and no
// more, so none per frame.
func BenchmarkDecode(b *testing.B) {
	requireFLAC(b)
	for _, c := range []struct {
		name string
		s    signal
	}{
		{"16bit-44k1", signal{44100, 2, 16, 441000, "music"}},
		{"24bit-96k", signal{96000, 2, 24, 960000, "music"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			file, _ := encode(b, c.s, "-8")
			data, err := os.ReadFile(file)
			if err != nil {
				b.Fatal(err)
			}
			r := &memReader{data}
			d, err := NewFile(r, int64(len(data)))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := d.Seek(0); err != nil {
					b.Fatal(err)
				}
				for {
					_, err := d.Frame()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/(float64(c.s.frames)/float64(c.s.rate)), "cpu-s/audio-s")
		})
	}
}

type memReader struct{ b []byte }

func (m *memReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// BenchmarkFile decodes the file STORYBOX_FLAC_FILE names once per pass,
// for instruction counts beside other decoders (docs/performance.md).
func BenchmarkFile(b *testing.B) {
	path := os.Getenv("STORYBOX_FLAC_FILE")
	if path == "" {
		b.Skip("STORYBOX_FLAC_FILE not set")
	}
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		st, _ := f.Stat()
		d, err := NewFile(f, st.Size())
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := d.Frame()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}
