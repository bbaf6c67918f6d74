// Package aac decodes AAC-LC (ISO/IEC 14496-3 subpart 4, ISO/IEC 13818-7)
// from raw frames, as an MP4 file or an ADTS stream carries them, into
// float32 PCM. HE-AAC and HE-AACv2 streams decode through their AAC-LC
// core, at the core's rate: the SBR and PS extensions are skipped, which
// SBR reports.
//
// A Decoder allocates at creation and never while decoding.
package aac

import (
	"fmt"
	"math"
)

// FrameSamples is the number of samples per channel of every frame.
const FrameSamples = 1024

// Syntactic element ids (4.4.2.1).
const (
	idSCE = 0
	idCPE = 1
	idCCE = 2
	idLFE = 3
	idDSE = 4
	idPCE = 5
	idFIL = 6
	idEND = 7
)

// outScale brings the standard's 16-bit scale to ±1.
const outScale = 1.0 / 32768

// channel is what a decoded channel keeps between frames.
type channel struct {
	ics       ics
	spec      [1024]float32
	overlap   [1024]float32
	prevShape int
}

// Decoder decodes the frames of one stream. It is not safe for concurrent
// use.
type Decoder struct {
	cfg       Config
	b         bitReader
	ch        [2]channel
	spare     ics // elements parsed only to get past them
	spareSpec [1024]float32
	out       int // element that plays: idSCE or idCPE; -1 until the first frame
	sbr       bool
	seed      uint32
	long      *imdct
	short     *imdct
	buf       [2048]float32
	win       [2048]float32
	pcm       [2][FrameSamples]float32
	stats     toolStats
	// slices is what Decode returns, kept here so returning it does not
	// allocate.
	slices [2][]float32
	// endBit is where the last frame's END element started, for tests
	// that splice elements into a frame.
	endBit int
}

// NewDecoder makes a decoder for the stream c describes.
func NewDecoder(c Config) (*Decoder, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	d := &Decoder{cfg: c, out: -1, sbr: c.SBR, seed: noiseSeed, long: newIMDCT(1024), short: newIMDCT(128)}
	switch c.Channels {
	case 1:
		d.out = idSCE
	case 2:
		d.out = idCPE
	}
	return d, nil
}

// Config is the stream's configuration.
func (d *Decoder) Config() Config { return d.cfg }

// SBR reports whether the stream carries spectral band replication (HE-AAC),
// announced in its configuration or found in a frame so far, which the
// decoder skips.
func (d *Decoder) SBR() bool { return d.sbr }

// noiseSeed starts the noise generator (noise in ics.go); Reset starts it
// again, so that decoding from a position gives the same noise every time.
// Any value but 0 does: this is the first 32 bits of the fraction of √2.
const noiseSeed = 0x6a09e667

// Reset forgets the previous frame, as after a seek: the next frame's first
// half then lacks its overlap, so the caller decodes one frame before the
// wanted one and drops its output.
func (d *Decoder) Reset() {
	d.seed = noiseSeed
	for i := range d.ch {
		clear(d.ch[i].overlap[:])
		d.ch[i].prevShape = 0
	}
}

// Decode decodes one raw_data_block and returns its samples per channel:
// one slice for a mono stream, two for stereo, each FrameSamples long and
// valid until the next call. A damaged frame returns an error; the decoder
// stays usable for the next.
func (d *Decoder) Decode(frame []byte) ([][]float32, error) {
	d.b.reset(frame)
	if err := d.decodeBlock(); err != nil {
		return nil, err
	}
	d.slices = [2][]float32{d.pcm[0][:], d.pcm[1][:]}
	return d.slices[:d.Channels()], nil
}

// Channels is the number of slices Decode returns, known after the first
// frame for a stream of configuration 0.
func (d *Decoder) Channels() int {
	if d.out == idSCE {
		return 1
	}
	return 2
}

func (d *Decoder) decodeBlock() error {
	b := &d.b
	done := false
	for {
		id := int(b.read(3))
		if b.overrun() {
			return fmt.Errorf("%w: frame ends without an END element", ErrCorrupt)
		}
		switch id {
		case idEND:
			d.endBit = b.pos - 3
			if !done {
				return fmt.Errorf("%w: frame without audio", ErrCorrupt)
			}
			return nil
		case idSCE, idCPE, idLFE:
			if done {
				return nil // further channels are not played
			}
			b.skip(4) // element_instance_tag
			if id == idLFE || (d.out == idCPE && id == idSCE) || (d.out == -1 && id == idSCE && d.cfg.Channels != 0) {
				if err := d.skipSCE(); err != nil {
					return err
				}
				continue
			}
			if d.out == -1 {
				d.out = id
			}
			if id != d.out {
				return fmt.Errorf("%w: the stream's channels changed", ErrCorrupt)
			}
			var err error
			if id == idSCE {
				err = d.decodeSCE()
			} else {
				err = d.decodeCPE()
			}
			if err != nil {
				return err
			}
			done = true
		case idCCE:
			return fmt.Errorf("%w: coupling channel element", ErrUnsupported)
		case idDSE:
			b.skip(4)
			align := b.bit()
			n := int(b.read(8))
			if n == 255 {
				n += int(b.read(8))
			}
			if align {
				b.align()
			}
			b.skip(uint(n) * 8)
		case idPCE:
			var pc programConfig
			if err := pc.parse(b); err != nil {
				return err
			}
		case idFIL:
			d.readFill()
		}
	}
}

// readFill skips a fill element, noting SBR data in it.
func (d *Decoder) readFill() {
	b := &d.b
	n := int(b.read(4))
	if n == 15 {
		n += int(b.read(8)) - 1
	}
	if n > 0 {
		if t := b.peek(4); t == 13 || t == 14 { // EXT_SBR_DATA, EXT_SBR_DATA_CRC
			d.sbr = true
		}
	}
	b.skip(uint(n) * 8)
}

func (d *Decoder) skipSCE() error {
	return d.readICS(&d.b, &d.spare, false, &d.spareSpec)
}

func (d *Decoder) decodeSCE() error {
	c := &d.ch[0]
	if err := d.readICS(&d.b, &c.ics, false, &c.spec); err != nil {
		return err
	}
	d.synthesize(c, &d.pcm[0])
	return nil
}

func (d *Decoder) decodeCPE() error {
	b := &d.b
	l, r := &d.ch[0], &d.ch[1]
	common := b.bit()
	var msMask int
	var ms [8][maxBands]bool
	if common {
		if err := d.readICSInfo(b, &l.ics.info); err != nil {
			return err
		}
		r.ics.info = l.ics.info
		msMask = int(b.read(2))
		switch msMask {
		case 1:
			for g := range l.ics.info.numGroups {
				for k := range l.ics.info.maxSfb {
					ms[g][k] = b.bit()
				}
			}
		case 3:
			return fmt.Errorf("%w: reserved ms_mask_present", ErrCorrupt)
		}
	}
	if err := d.readICS(b, &l.ics, common, &l.spec); err != nil {
		return err
	}
	if err := d.readICS(b, &r.ics, common, &r.spec); err != nil {
		return err
	}
	if common {
		d.stereo(l, r, msMask, &ms)
	}
	d.synthesize(l, &d.pcm[0])
	d.synthesize(r, &d.pcm[1])
	return nil
}

// stereo undoes mid/side coding and fills intensity-coded bands of the right
// channel from the left (4.6.8.1, 4.6.8.2). An intensity band's sign is
// that of its codebook (INTENSITY_HCB in phase, INTENSITY_HCB2 out of
// phase), inverted where ms_used is set; with ms_mask_present 2 every band
// counts as ms_used and inverts too, as ffmpeg has it (consulted for this
// sign convention; the standard's invert_intensity names only
// ms_mask_present 1), whose decoding the accuracy tests compare with.
func (d *Decoder) stereo(l, r *channel, msMask int, ms *[8][maxBands]bool) {
	info := &l.ics.info
	win := 0
	for g := range info.numGroups {
		for k := range info.maxSfb {
			lcb, rcb := l.ics.cb[g][k], r.ics.cb[g][k]
			used := msMask == 2 || (msMask == 1 && ms[g][k])
			lo, hi := int(info.swb[k]), int(info.swb[k+1])
			for w := win; w < win+info.groupLen[g]; w++ {
				ls := l.spec[w*128+lo : w*128+hi]
				rs := r.spec[w*128+lo : w*128+hi]
				switch {
				case rcb == intensityHCB || rcb == intensityHCB2:
					d.stats.intensity++
					scale := float32(math.Exp2(-float64(r.ics.sf[g][k]) / 4))
					if (rcb == intensityHCB2) != used {
						scale = -scale
					}
					for i := range rs {
						rs[i] = ls[i] * scale
					}
				case lcb == noiseHCB && rcb == noiseHCB:
					if used {
						// The same noise in both channels, at the right
						// channel's energy.
						var el, er float32
						for i := range rs {
							el += ls[i] * ls[i]
							er += rs[i] * rs[i]
						}
						s := float32(0)
						if el > 0 {
							s = float32(math.Sqrt(float64(er / el)))
						}
						for i := range rs {
							rs[i] = ls[i] * s
						}
					}
				case used && lcb != noiseHCB && rcb != noiseHCB:
					d.stats.ms++
					for i := range ls {
						m, s := ls[i], rs[i]
						ls[i], rs[i] = m+s, m-s
					}
				}
			}
		}
		win += info.groupLen[g]
	}
}

// specBound is the largest spectral value, in the standard's 16-bit
// scale, the filter bank takes; a channel's spectrum with a larger one (or
// one that is no number) is decoded as silence for the frame. It is
// checked where the spectrum is final: after inverse quantisation, scale
// factors, pulses, noise substitution, mid/side and intensity stereo and
// TNS (4.6.1 to 4.6.9), each of which can raise a value out of any legal
// range. Syntax alone allows 8191^(4/3)·2^((255-100)/4) = 7.6e16 from an
// escape at the largest scale factor, 2^(155/4) = 4.9e11 times a legal
// left channel from an intensity position, and a TNS filter of order 12
// whose reflection coefficients are all 0.9945 overflows a legal
// spectrum into infinities. Decoded as coded, TestLoudFramesAreSilence's
// frames give 5e10, 1.4e13 and NaN at the output.
//
// No input within full scale comes near it. The MDCT this decoder's IMDCT
// (2/N, 4.6.11) inverts is 2·Σ w·x·cos over the N inputs of a window: at
// full scale, |x| <= 32768, a value is at most 2 · 32768 · Σw, and Σw is
// largest for the long sine window, 1/sin(π/4096) = 1,304 (KBD 1,214;
// short windows 163 and 148): 8.5e7. 2^35 is 400 times that (52 dB);
// ffmpeg's encodings of full-scale sines, square waves and noise reach
// half of 8.5e7 (TestLegalLevelsStayBelowTheBound). Through the filter
// bank an output sample is at most the bound times the largest sum of the
// magnitudes of the coefficients that make it, the current window's and
// the previous frame's overlap: 5.8e-5 (TestWorstCaseGain computes it
// from the decoder's own transforms), 2e6 at the bound, far below the
// fuzz targets' 1e9.
const specBound = 1 << 35

// synthesize runs TNS and the filter bank over a channel's spectrum and
// overlaps the result with the previous frame's second half.
func (d *Decoder) synthesize(c *channel, out *[FrameSamples]float32) {
	info := &c.ics.info
	bd := &bands[d.cfg.RateIndex]
	if c.ics.tns.present {
		d.stats.tns++
		maxBands := bd.tnsMaxLong
		if info.windowSequence == eightShort {
			maxBands = bd.tnsMaxShort
		}
		c.ics.tns.apply(&c.spec, info, maxBands)
	}
	var hi, lo float32
	for _, v := range c.spec {
		hi, lo = max(hi, v), min(lo, v) // a NaN carries through both
	}
	if hi <= specBound && lo >= -specBound {
		d.stats.loudest = max(d.stats.loudest, hi, -lo)
	} else {
		d.stats.refused++
		clear(c.spec[:])
	}
	shape, prev := info.windowShape, c.prevShape
	buf := &d.buf
	ov := &c.overlap
	if info.windowSequence == eightShort {
		d.stats.short++
		w := &d.win
		clear(w[:])
		ws := shortWindow(shape)
		for k := range 8 {
			d.short.run(c.spec[k*128:k*128+128], buf[:256], outScale/128)
			left := ws
			if k == 0 {
				left = shortWindow(prev)
			}
			o := w[448+128*k:]
			for i := range 128 {
				o[i] += buf[i] * left[i]
				o[128+i] += buf[128+i] * ws[127-i]
			}
		}
		for i := range FrameSamples {
			out[i] = ov[i] + w[i]
		}
		copy(ov[:], w[1024:])
		c.prevShape = shape
		return
	}
	d.long.run(c.spec[:], buf[:], outScale/1024)
	switch info.windowSequence {
	case longStop:
		ws := shortWindow(prev)
		for i := range 448 {
			out[i] = ov[i]
		}
		for i := range 128 {
			out[448+i] = ov[448+i] + buf[448+i]*ws[i]
		}
		for i := 576; i < 1024; i++ {
			out[i] = ov[i] + buf[i]
		}
	default:
		wl := longWindow(prev)
		for i := range FrameSamples {
			out[i] = ov[i] + buf[i]*wl[i]
		}
	}
	switch info.windowSequence {
	case longStart:
		ws := shortWindow(shape)
		copy(ov[:448], buf[1024:1472])
		for i := range 128 {
			ov[448+i] = buf[1472+i] * ws[127-i]
		}
		clear(ov[576:])
	default:
		wl := longWindow(shape)
		for i := range FrameSamples {
			ov[i] = buf[1024+i] * wl[1023-i]
		}
	}
	c.prevShape = shape
}
