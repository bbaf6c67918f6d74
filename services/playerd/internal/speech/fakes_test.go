package speech

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"sync"
)

// testWAV is a mono 16-bit WAV of n samples of a 440 Hz tone at rate.
func testWAV(rate, n int) []byte {
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + 2*n))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1))
	le(uint16(1))
	le(uint32(rate))
	le(uint32(2 * rate))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("data")
	le(uint32(2 * n))
	for i := range n {
		le(int16(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate))))
	}
	return b.Bytes()
}

// fakeVoice renders a tone whose length grows with the text.
type fakeVoice struct {
	id      string
	mu      sync.Mutex
	renders []string
	err     error         // returned by Render
	unavail error         // returned by Available
	block   chan struct{} // Render waits for it when set
}

func (v *fakeVoice) ID() string       { return v.id }
func (v *fakeVoice) Available() error { return v.unavail }
func (v *fakeVoice) Render(ctx context.Context, r Request) ([]byte, error) {
	v.mu.Lock()
	v.renders = append(v.renders, r.Settings.Language+":"+r.Text)
	v.mu.Unlock()
	if v.block != nil {
		select {
		case <-v.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if v.err != nil {
		return nil, v.err
	}
	return testWAV(16000, 160*len(r.Text)), nil
}

func (v *fakeVoice) rendered() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.renders...)
}

// fakePlayer records clips; each clip "plays" until the test releases it.
type fakePlayer struct {
	mu      sync.Mutex
	clips   [][][2]float64
	release chan struct{} // one receive per clip; nil plays instantly
	err     error
}

func (p *fakePlayer) Announce(ctx context.Context, pcm [][2]float64) (<-chan struct{}, error) {
	if p.err != nil {
		return nil, p.err
	}
	if len(pcm) == 0 {
		return nil, errors.New("empty clip")
	}
	p.mu.Lock()
	p.clips = append(p.clips, pcm)
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		if p.release != nil {
			select {
			case <-p.release:
			case <-ctx.Done():
			}
		}
		close(done)
	}()
	return done, nil
}

func (p *fakePlayer) lens() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n []int
	for _, c := range p.clips {
		n = append(n, len(c))
	}
	return n
}
