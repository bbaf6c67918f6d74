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
func (d *Decoder) readICS(b *bitReader, c *ics, commonWindow bool, spec *[1024]float32) error {
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
	if err := d.readSpectrum(b, c, spec); err != nil {
		return err
	}
	if b.overrun() {
		return fmt.Errorf("%w: channel stream beyond the frame", ErrCorrupt)
	}
	if c.pulse {
		d.stats.pulse++
		return c.applyPulses(spec)
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

// readScaleFactors reads each band's scale factor, intensity position or
// noise energy. All three scale a band by a power of 2^(1/4); each is held
// to the range that keeps that gain within a scale factor's own (0..255,
// 2^-25..2^38.75): noise energies -100..155, intensity positions
// -155..100. Outside it a frame is corrupt (a gain of 2^250 would reach
// the output as infinities).
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
				if isPos < -155 || isPos > 100 {
					return fmt.Errorf("%w: intensity position %d", ErrCorrupt, isPos)
				}
				c.sf[g][k] = isPos
			case noiseHCB:
				if firstNoise {
					firstNoise = false
					noise += int(b.read(9)) - 256
				} else {
					noise += sfHuff.decode(b) - 60
				}
				if noise < -100 || noise > 155 {
					return fmt.Errorf("%w: noise energy %d", ErrCorrupt, noise)
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
	if b.overrun() {
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

// cbValues unpacks each codebook's indices into values, four per index;
// cbNonZero counts an index's nonzero values, the sign bits that follow it
// in unsigned codebooks.
var (
	cbValues  [12][][4]int8
	cbNonZero [12][]uint8
)

func init() {
	for cb := 1; cb <= 11; cb++ {
		s := cbShape[cb]
		n := len(specCodes[cb-1])
		vs := make([][4]int8, n)
		nz := make([]uint8, n)
		for i := range n {
			if s.dim == 4 {
				vs[i] = [4]int8{int8(i/27 - s.off), int8(i/9%3 - s.off), int8(i/3%3 - s.off), int8(i%3 - s.off)}
			} else {
				vs[i] = [4]int8{int8(i/s.mod - s.off), int8(i%s.mod - s.off)}
			}
			for _, v := range vs[i] {
				if v != 0 {
					nz[i]++
				}
			}
		}
		cbValues[cb], cbNonZero[cb] = vs, nz
	}
}

// readSpectrum reads the spectrum and dequantizes it into spec, window
// after window of 128 values for short windows: the bitstream interleaves
// a group's windows band by band. Noise bands get noise; zero and intensity
// bands stay zero for the stereo step. With pulses, the quantized values
// are kept in q as well, to apply them.
func (d *Decoder) readSpectrum(b *bitReader, c *ics, spec *[1024]float32) error {
	clear(spec[:])
	if c.pulse {
		clear(c.q[:])
	}
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
				dst := spec[w*128+lo : w*128+hi]
				var err error
				if cbShape[cb].dim == 4 {
					err = readQuads(b, cb, dst, gain)
				} else {
					err = readPairs(b, cb, dst, gain)
				}
				if err != nil {
					return err
				}
				if b.overrun() {
					return fmt.Errorf("%w: spectral data beyond the frame", ErrCorrupt)
				}
				if c.pulse {
					for i, v := range dst {
						c.q[w*128+lo+i] = quantized(v, gain)
					}
				}
			}
		}
		win += info.groupLen[g]
	}
	return nil
}

// quantized recovers a quantized value from its dequantized one (for
// pulses, which are rare): the nearest integer of (|v|/gain)^(3/4).
func quantized(v, gain float32) int32 {
	if v == 0 {
		return 0
	}
	q := int32(math.Round(math.Pow(math.Abs(float64(v/gain)), 0.75)))
	if v < 0 {
		return -q
	}
	return q
}

func readQuads(b *bitReader, cb uint8, dst []float32, gain float32) error {
	h := &specHuff[cb-1]
	vals := cbValues[cb]
	unsigned := cbShape[cb].unsigned
	for i := 0; i+4 <= len(dst); i += 4 {
		idx := h.decode(b)
		if idx < 0 {
			return fmt.Errorf("%w: spectral codeword", ErrCorrupt)
		}
		v := &vals[idx]
		if !unsigned {
			dst[i] = float32(v[0]) * gain // |v| <= 1: |v|^(4/3) = |v|
			dst[i+1] = float32(v[1]) * gain
			dst[i+2] = float32(v[2]) * gain
			dst[i+3] = float32(v[3]) * gain
			continue
		}
		n := uint(cbNonZero[cb][idx])
		signs := b.read(n) << (32 - n)
		for j := range 4 {
			x := v[j]
			if x == 0 {
				continue
			}
			f := pow43[x] * gain
			if signs&(1<<31) != 0 {
				f = -f
			}
			signs <<= 1
			dst[i+j] = f
		}
	}
	return nil
}

func readPairs(b *bitReader, cb uint8, dst []float32, gain float32) error {
	h := &specHuff[cb-1]
	vals := cbValues[cb]
	unsigned := cbShape[cb].unsigned
	for i := 0; i+2 <= len(dst); i += 2 {
		idx := h.decode(b)
		if idx < 0 {
			return fmt.Errorf("%w: spectral codeword", ErrCorrupt)
		}
		v := &vals[idx]
		if !unsigned {
			for j := range 2 {
				x := v[j]
				if x > 0 {
					dst[i+j] = pow43[x] * gain
				} else if x < 0 {
					dst[i+j] = -pow43[-x] * gain
				}
			}
			continue
		}
		n := uint(cbNonZero[cb][idx])
		signs := b.read(n) << (32 - n)
		for j := range 2 {
			x := int32(v[j])
			if x == 0 {
				continue
			}
			neg := signs&(1<<31) != 0
			signs <<= 1
			if x == 16 && cb == escHCB {
				e, err := readEscape(b)
				if err != nil {
					return err
				}
				x = e
			}
			f := pow43[x] * gain
			if neg {
				f = -f
			}
			dst[i+j] = f
		}
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

// applyPulses adds pulse_data's amplitudes to the quantized values
// (pulse_data, 4.6.3) and dequantizes the values they changed again.
func (c *ics) applyPulses(spec *[1024]float32) error {
	k := int(c.info.swb[c.pulseStart])
	band := c.pulseStart
	for i := range c.pulseN {
		k += c.pulseOff[i]
		if k >= 1024 {
			return fmt.Errorf("%w: pulse beyond the spectrum", ErrCorrupt)
		}
		for band < c.info.numSwb-1 && k >= int(c.info.swb[band+1]) {
			band++
		}
		if c.q[k] > 0 {
			c.q[k] += int32(c.pulseAmp[i])
		} else {
			c.q[k] -= int32(c.pulseAmp[i])
		}
		cb := c.cb[0][band]
		if band >= c.info.maxSfb || cb == zeroHCB || cb >= noiseHCB {
			continue // a pulse in a band without spectral values has no scale
		}
		x := c.q[k]
		f := pow43[min(abs32(x), int32(len(pow43)-1))] * sfGain[c.sf[0][band]]
		if x < 0 {
			f = -f
		}
		spec[k] = f
	}
	return nil
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// pow43 is |q|^(4/3) (inverse quantization, 4.6.1) for every quantized
// magnitude the syntax allows
// (escapes up to 8191, pulses add at most 4×15).
var pow43 [8192 + 64]float32

// sfGain is 2^((sf-100)/4) for the 256 scale factors (4.6.2).
var sfGain [256]float32

func init() {
	for i := range pow43 {
		pow43[i] = float32(math.Pow(float64(i), 4.0/3))
	}
	for i := range sfGain {
		sfGain[i] = float32(math.Exp2(float64(i-100) / 4))
	}
}

// noise fills a band with noise (perceptual noise substitution, ISO/IEC
// 14496-3 4.6.13.3). The standard leaves the random values to the decoder
// and fixes their energy: the band's random vector r is scaled by
// 2^(noise_nrg/4)/sqrt(Σ r²), so that its energy is gain² with gain =
// 2^(noise_nrg/4). The values here are a 32-bit xorshift generator's
// (Marsaglia's shifts 13, 17, 5) read as signed numbers, which have zero
// mean; the energy is summed in float64 over the float32 values the band
// holds, so the scaled band carries the coded energy to float32 rounding.
func (d *Decoder) noise(band []float32, gain float32) {
	var energy float64
	x := d.seed
	for i := range band {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		v := float32(int32(x))
		band[i] = v
		energy += float64(v) * float64(v)
	}
	d.seed = x
	if energy == 0 {
		return
	}
	s := float64(gain) / math.Sqrt(energy)
	for i := range band {
		band[i] = float32(float64(band[i]) * s)
	}
}
