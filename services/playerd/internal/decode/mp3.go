package decode

import (
	"errors"
	"fmt"
	"io"

	"github.com/gopxl/beep/v2"
	gomp3 "github.com/hajimehoshi/go-mp3"
)

// mp3Decoder is beep/mp3's decoder with the same samples, read in bulk:
// beep's asks go-mp3 for 4 bytes per frame and converts each sample with a
// power of two worked out by math.Exp2, a tenth of the CPU of playing an
// MP3. go-mp3 always gives 16-bit stereo.
type mp3Decoder struct {
	closer io.Closer
	d      *gomp3.Decoder
	pos    int // frames
	err    error
	buf    []byte
	have   int // bytes in buf from a read that ended inside a frame
}

const mp3FrameBytes = 4

func decodeMP3(rc io.ReadCloser) (beep.StreamSeekCloser, beep.Format, error) {
	d, err := gomp3.NewDecoder(rc)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("mp3: %w", err)
	}
	format := beep.Format{SampleRate: beep.SampleRate(d.SampleRate()), NumChannels: 2, Precision: 2}
	return &mp3Decoder{closer: rc, d: d}, format, nil
}

func (d *mp3Decoder) Stream(samples [][2]float64) (n int, ok bool) {
	if d.err != nil {
		return 0, false
	}
	if want := len(samples) * mp3FrameBytes; cap(d.buf) < want {
		d.buf = append(d.buf[:d.have], make([]byte, want-d.have)...)
	}
	for n < len(samples) {
		dn, err := d.d.Read(d.buf[d.have : (len(samples)-n)*mp3FrameBytes])
		d.have += dn
		k := d.have / mp3FrameBytes
		for i := range k {
			b := d.buf[i*mp3FrameBytes:]
			const scale = 1.0 / (1 << 15) // exact: a power of two
			samples[n+i] = [2]float64{
				float64(int16(uint16(b[0])|uint16(b[1])<<8)) * scale,
				float64(int16(uint16(b[2])|uint16(b[3])<<8)) * scale,
			}
		}
		n += k
		d.pos += k
		d.have = copy(d.buf, d.buf[k*mp3FrameBytes:d.have])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			d.err = fmt.Errorf("mp3: %w", err)
			break
		}
		if dn == 0 {
			break
		}
	}
	return n, n > 0
}

func (d *mp3Decoder) Err() error { return d.err }

func (d *mp3Decoder) Len() int { return int(d.d.Length()) / mp3FrameBytes }

func (d *mp3Decoder) Position() int { return d.pos }

func (d *mp3Decoder) Seek(p int) error {
	if p < 0 || d.Len() < p {
		return fmt.Errorf("mp3: seek position %v out of range [%v, %v]", p, 0, d.Len())
	}
	if _, err := d.d.Seek(int64(p)*mp3FrameBytes, io.SeekStart); err != nil {
		return fmt.Errorf("mp3: %w", err)
	}
	d.pos, d.have = p, 0
	return nil
}

func (d *mp3Decoder) Close() error {
	if err := d.closer.Close(); err != nil {
		return fmt.Errorf("mp3: %w", err)
	}
	return nil
}
