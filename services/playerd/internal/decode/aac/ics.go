package aac

import (
	"fmt"
	"math"
)

// Window sequences (4.6.11).
const (
	onlyLong   = 0
	longStart  = 1
	eightShort = 2
	longStop   = 3
)

// Codebooks with a meaning of their own (4.6.3).
const (
	zeroHCB       = 0
	escHCB        = 11
	noiseHCB      = 13
	intensityHCB2 = 14
	intensityHCB  = 15
)

const maxBands = 64 // more than the most scale factor bands of any rate (51)

// icsInfo is ics_info (4.4.2.1) with what follows from it.
type icsInfo struct {
	windowSequence int
	windowShape    int
	maxSfb         int
	numWindows     int
	numGroups      int
	groupLen       [8]int
	swb            []uint16 // band offsets of the window length
	numSwb         int      // bands of the window length at this rate
}

// ics is one channel's individual_channel_stream of the current frame.
type ics struct {
	info       icsInfo
	globalGain int
	cb         [8][maxBands]uint8 // codebook per group and band
	sf         [8][maxBands]int   // scale factor, intensity position or noise energy
	pulse      bool
	pulseStart int
	pulseN     int
	pulseOff   [4]int
	pulseAmp   [4]int
	tns        tnsData
	q          [1024]int32 // quantized values, window after window
}

func (d *Decoder) readICSInfo(b *bitReader, info *icsInfo) error {
	if b.bit() {
		return fmt.Errorf("%w: ics_reserved_bit set", ErrCorrupt)
	}
	info.windowSequence = int(b.read(2))
	info.windowShape = int(b.read(1))
	bd := &bands[d.cfg.RateIndex]
	if info.windowSequence == eightShort {
		info.maxSfb = int(b.read(4))
		grouping := b.read(7)
		info.numWindows = 8
		info.numGroups = 1
		info.groupLen = [8]int{1}
		for i := 6; i >= 0; i-- {
			if grouping>>uint(i)&1 != 0 {
				info.groupLen[info.numGroups-1]++
			} else {
				info.numGroups++
				info.groupLen[info.numGroups-1] = 1
			}
		}
		info.swb = bd.short
	} else {
		info.maxSfb = int(b.read(6))
		info.numWindows, info.numGroups = 1, 1
		info.groupLen = [8]int{1}
		info.swb = bd.long
		if b.bit() {
			return fmt.Errorf("%w: prediction (AAC Main)", ErrUnsupported)
		}
	}
	info.numSwb = len(info.swb) - 1
	if info.maxSfb > info.numSwb {
		return fmt.Errorf("%w: max_sfb %d of %d bands", ErrCorrupt, info.maxSfb, info.numSwb)
	}
	return nil
}

// readICS reads an individual_channel_stream (4.4.2.7) up to and including
// its quantized spectrum.
func (d *Decoder) readICS(b *bitReader, c *ics, commonWindow bool) error {
	c.globalGain = int(b.read(8))
	if !commonWindow {
		if err := d.readICSInfo(b, &c.info); err != nil {
			return err
		}
	}
	if err := c.readSections(b); err != nil {
		return err
	}
	if err := c.readScaleFactors(b); err != nil {
		return err
	}
	c.pulse = b.bit()
	if c.pulse {
		if c.info.windowSequence == eightShort {
			return fmt.Errorf("%w: pulse data in short windows", ErrCorrupt)
		}
		c.pulseN = int(b.read(2)) + 1
		c.pulseStart = int(b.read(6))
		if c.pulseStart >= c.info.numSwb {
			return fmt.Errorf("%w: pulse start band %d", ErrCorrupt, c.pulseStart)
		}
		for i := range c.pulseN {
			c.pulseOff[i] = int(b.read(5))
			c.pulseAmp[i] = int(b.read(4))
		}
	}
	c.tns.present = b.bit()
	if c.tns.present {
		if err := c.tns.read(b, &c.info); err != nil {
			return err
		}
	}
	if b.bit() {
		return fmt.Errorf("%w: gain control (AAC SSR)", ErrUnsupported)
	}
	if err := c.readSpectrum(b); err != nil {
		return err
	}
	if b.overrun() {
		return fmt.Errorf("%w: channel stream beyond the frame", ErrCorrupt)
	}
	if c.pulse {
		d.stats.pulse++
		k := int(c.info.swb[c.pulseStart])
		for i := range c.pulseN {
			k += c.pulseOff[i]
			if k >= 1024 {
				return fmt.Errorf("%w: pulse beyond the spectrum", ErrCorrupt)
			}
			if c.q[k] > 0 {
				c.q[k] += int32(c.pulseAmp[i])
			} else {
				c.q[k] -= int32(c.pulseAmp[i])
			}
		}
	}
	return nil
}

func (c *ics) readSections(b *bitReader) error {
	bits, esc := uint(5), uint32(31)
	if c.info.windowSequence == eightShort {
		bits, esc = 3, 7
	}
	for g := range c.info.numGroups {
		for k := 0; k < c.info.maxSfb; {
			cb := uint8(b.read(4))
			if cb == 12 {
				return fmt.Errorf("%w: reserved codebook 12", ErrCorrupt)
			}
			n := 0
			for {
				inc := b.read(bits)
				n += int(inc)
				if inc != esc {
					break
				}
				if b.overrun() {
					return fmt.Errorf("%w: section data", ErrCorrupt)
				}
			}
			if k+n > c.info.maxSfb || b.overrun() {
				return fmt.Errorf("%w: section beyond max_sfb", ErrCorrupt)
			}
			for e := k + n; k < e; k++ {
				c.cb[g][k] = cb
			}
		}
	}
	return nil
}

func (c *ics) readScaleFactors(b *bitReader) error {
	sf := c.globalGain
	isPos := 0
	noise := c.globalGain - 90
	firstNoise := true
	for g := range c.info.numGroups {
		for k := range c.info.maxSfb {
			switch c.cb[g][k] {
			case zeroHCB:
				c.sf[g][k] = 0
			case intensityHCB, intensityHCB2:
				isPos += sfHuff.decode(b) - 60
				c.sf[g][k] = isPos
			case noiseHCB:
				if firstNoise {
					firstNoise = false
					noise += int(b.read(9)) - 256
				} else {
					noise += sfHuff.decode(b) - 60
				}
				c.sf[g][k] = noise
			default:
				sf += sfHuff.decode(b) - 60
				if sf < 0 || sf > 255 {
					return fmt.Errorf("%w: scale factor %d", ErrCorrupt, sf)
				}
				c.sf[g][k] = sf
			}
		}
	}
	// A codeword that matched nothing decodes as -1, far out of range of
	// the deltas: caught above or by the bounds of its use.
	if b.overrun() || isPos < -1000 || isPos > 1000 || noise < -1000 || noise > 1000 {
		return fmt.Errorf("%w: scale factors", ErrCorrupt)
	}
	return nil
}

// Spectral codebooks: dimension, whether values are unsigned (signs follow
// the codeword), and the modulus of the index.
var cbShape = [12]struct {
	dim, mod, off int
	unsigned      bool
}{
	1: {4, 3, 1, false}, 2: {4, 3, 1, false}, 3: {4, 3, 0, true}, 4: {4, 3, 0, true},
	5: {2, 9, 4, false}, 6: {2, 9, 4, false}, 7: {2, 8, 0, true}, 8: {2, 8, 0, true},
	9: {2, 13, 0, true}, 10: {2, 13, 0, true}, 11: {2, 17, 0, true},
}

// cbValues unpacks each codebook's indices into values, four per index.
var cbValues [12][][4]int8

func init() {
	for cb := 1; cb <= 11; cb++ {
		s := cbShape[cb]
		n := len(specCodes[cb-1])
		vs := make([][4]int8, n)
		for i := range n {
			if s.dim == 4 {
				vs[i] = [4]int8{int8(i/27 - s.off), int8(i/9%3 - s.off), int8(i/3%3 - s.off), int8(i%3 - s.off)}
			} else {
				vs[i] = [4]int8{int8(i/s.mod - s.off), int8(i%s.mod - s.off)}
			}
		}
		cbValues[cb] = vs
	}
}

// readSpectrum reads the quantized spectrum into q, window after window of
// 128 values for short windows: the bitstream interleaves a group's
// windows band by band.
func (c *ics) readSpectrum(b *bitReader) error {
	q := &c.q
	clear(q[:])
	win := 0
	for g := range c.info.numGroups {
		for k := 0; k < c.info.maxSfb; k++ {
			cb := c.cb[g][k]
			if cb == zeroHCB || cb >= noiseHCB {
				continue
			}
			s := cbShape[cb]
			h := &specHuff[cb-1]
			vals := cbValues[cb]
			lo, hi := int(c.info.swb[k]), int(c.info.swb[k+1])
			for w := win; w < win+c.info.groupLen[g]; w++ {
				base := w * 128
				for i := lo; i < hi; i += s.dim {
					idx := h.decode(b)
					if idx < 0 {
						return fmt.Errorf("%w: spectral codeword", ErrCorrupt)
					}
					v := &vals[idx]
					for j := range s.dim {
						x := int32(v[j])
						if s.unsigned && x != 0 && b.bit() {
							x = -x
						}
						q[base+i+j] = x
					}
					if cb == escHCB {
						for j := range 2 {
							x := q[base+i+j]
							if x == 16 || x == -16 {
								e, err := readEscape(b)
								if err != nil {
									return err
								}
								if x < 0 {
									e = -e
								}
								q[base+i+j] = e
							}
						}
					}
				}
				if b.overrun() {
					return fmt.Errorf("%w: spectral data beyond the frame", ErrCorrupt)
				}
			}
		}
		win += c.info.groupLen[g]
	}
	return nil
}

func readEscape(b *bitReader) (int32, error) {
	n := uint(4)
	for b.bit() {
		n++
		if n > 12 {
			return 0, fmt.Errorf("%w: escape sequence", ErrCorrupt)
		}
	}
	return int32(1)<<n + int32(b.read(n)), nil
}

// pow43 is |q|^(4/3) for every quantized magnitude the syntax allows
// (escapes up to 8191, pulses add at most 4×15).
var pow43 [8192 + 64]float32

// sfGain is 2^((sf-100)/4) for the 256 scale factors.
var sfGain [256]float32

func init() {
	for i := range pow43 {
		pow43[i] = float32(math.Pow(float64(i), 4.0/3))
	}
	for i := range sfGain {
		sfGain[i] = float32(math.Exp2(float64(i-100) / 4))
	}
}

// dequantize turns the quantized spectrum into spec, scaled band by band;
// noise bands get noise, intensity bands stay zero for the stereo step.
func (d *Decoder) dequantize(c *ics, spec *[1024]float32) {
	clear(spec[:])
	info := &c.info
	win := 0
	for g := range info.numGroups {
		for k := 0; k < info.maxSfb; k++ {
			cb := c.cb[g][k]
			lo, hi := int(info.swb[k]), int(info.swb[k+1])
			switch {
			case cb == zeroHCB || cb == intensityHCB || cb == intensityHCB2:
				continue
			case cb == noiseHCB:
				d.stats.noise++
				gain := float32(math.Exp2(float64(c.sf[g][k]) / 4))
				for w := win; w < win+info.groupLen[g]; w++ {
					d.noise(spec[w*128+lo:w*128+hi], gain)
				}
				continue
			}
			gain := sfGain[c.sf[g][k]]
			for w := win; w < win+info.groupLen[g]; w++ {
				base := w * 128
				src := c.q[base+lo : base+hi]
				dst := spec[base+lo : base+hi]
				for i, x := range src {
					if x == 0 {
						continue
					}
					if x > 0 {
						dst[i] = pow43[x] * gain
					} else {
						dst[i] = -pow43[-x] * gain
					}
				}
			}
		}
		win += info.groupLen[g]
	}
}

// noise fills a band with uniform noise of the given RMS-derived energy
// (perceptual noise substitution, 4.6.13).
func (d *Decoder) noise(band []float32, gain float32) {
	var energy float32
	for i := range band {
		d.seed = d.seed*1664525 + 1013904223
		v := float32(int32(d.seed))
		band[i] = v
		energy += v * v
	}
	if energy == 0 {
		return
	}
	s := gain / float32(math.Sqrt(float64(energy)))
	for i := range band {
		band[i] *= s
	}
}
