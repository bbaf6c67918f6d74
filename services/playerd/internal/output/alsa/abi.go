// Package alsa plays PCM through a kernel ALSA device (/dev/snd/pcmC*D*p)
// with plain ioctls, so it builds without cgo and libasound. It negotiates the
// hardware and software parameters, writes interleaved frames, recovers from
// underruns and suspends, and reports a vanished device as ErrGone. Linux
// only, like the box.
package alsa

import "unsafe"

// The structures below mirror <sound/asound.h> for 64-bit Linux. C's
// unsigned long (snd_pcm_uframes_t) and long (snd_pcm_sframes_t) map to Go's
// uint and int. abi_check.go pins their sizes and the ioctl numbers.

const (
	maskParams     = 3  // ACCESS, FORMAT, SUBFORMAT
	intervalParams = 12 // SAMPLE_BITS .. TICK_TIME
)

// Parameter indexes (SNDRV_PCM_HW_PARAM_*).
const (
	paramAccess    = 0
	paramFormat    = 1
	paramSubformat = 2

	paramSampleBits = 8
	paramFrameBits  = 9
	paramChannels   = 10
	paramRate       = 11
	paramPeriodTime = 12
	paramPeriodSize = 13
	paramPeriodByte = 14
	paramPeriods    = 15
	paramBufferTime = 16
	paramBufferSize = 17
	paramBufferByte = 18
	paramTickTime   = 19

	firstInterval = paramSampleBits
)

const accessRWInterleaved = 3 // SNDRV_PCM_ACCESS_RW_INTERLEAVED

// infoNoRewinds (SNDRV_PCM_INFO_NO_REWINDS) in hw_params.info: the driver
// cannot take back audio it was given.
const infoNoRewinds = 0x20000000

// Format is an ALSA sample format (SNDRV_PCM_FORMAT_*).
type Format int

const (
	S16LE     Format = 2
	S24LE     Format = 6 // 24 bits in the low bytes of 32
	S32LE     Format = 10
	S24Packed Format = 32 // 24 bits packed in 3 bytes, as many USB DACs take them
)

func (f Format) String() string {
	switch f {
	case S16LE:
		return "S16_LE"
	case S24LE:
		return "S24_LE"
	case S32LE:
		return "S32_LE"
	case S24Packed:
		return "S24_3LE"
	}
	return "format#" + itoa(int(f))
}

// Bytes is the size of one sample.
func (f Format) Bytes() int {
	switch f {
	case S24LE, S32LE:
		return 4
	case S24Packed:
		return 3
	}
	return 2
}

type mask struct{ bits [8]uint32 }

// Interval flag bits; C bit fields are allocated from the least significant
// bit on little-endian targets.
const (
	ivOpenMin = 1 << 0
	ivOpenMax = 1 << 1
	ivInteger = 1 << 2
	ivEmpty   = 1 << 3
)

type interval struct {
	min, max uint32
	flags    uint32
}

type hwParams struct {
	flags     uint32
	masks     [maskParams]mask
	mres      [5]mask
	intervals [intervalParams]interval
	ires      [9]interval
	rmask     uint32
	cmask     uint32
	info      uint32
	msbits    uint32
	rateNum   uint32
	rateDen   uint32
	fifoSize  uint
	reserved  [64]byte
}

type swParams struct {
	tstampMode       int32
	periodStep       uint32
	sleepMin         uint32
	availMin         uint
	xferAlign        uint
	startThreshold   uint
	stopThreshold    uint
	silenceThreshold uint
	silenceSize      uint
	boundary         uint
	proto            uint32
	tstampType       uint32
	reserved         [56]byte
}

// xferi is struct snd_xferi. buf is an unsafe.Pointer rather than a uintptr
// so the garbage collector keeps the buffer alive during the call.
type xferi struct {
	result int
	buf    unsafe.Pointer
	frames uint
}

// ioctl request numbers, built like the kernel's _IOC macros (the generic
// encoding, which both amd64 and arm64 use).
const (
	iocNone  = 0
	iocWrite = 1
	iocRead  = 2

	iocPVersion = iocRead<<30 | 4<<16 | 'A'<<8 // nr 0x00
	iocHWRefine = (iocRead|iocWrite)<<30 | unsafe.Sizeof(hwParams{})<<16 | 'A'<<8 | 0x10
	iocHWParams = (iocRead|iocWrite)<<30 | unsafe.Sizeof(hwParams{})<<16 | 'A'<<8 | 0x11
	iocSWParams = (iocRead|iocWrite)<<30 | unsafe.Sizeof(swParams{})<<16 | 'A'<<8 | 0x13
	iocDelay    = iocRead<<30 | unsafe.Sizeof(int(0))<<16 | 'A'<<8 | 0x21
	iocPrepare  = iocNone<<30 | 'A'<<8 | 0x40
	iocDrop     = iocNone<<30 | 'A'<<8 | 0x43
	iocDrain    = iocNone<<30 | 'A'<<8 | 0x44
	iocRewind   = iocWrite<<30 | unsafe.Sizeof(uint(0))<<16 | 'A'<<8 | 0x46
	iocResume   = iocNone<<30 | 'A'<<8 | 0x47
	iocWriteI   = iocWrite<<30 | unsafe.Sizeof(xferi{})<<16 | 'A'<<8 | 0x50
	iocReadI    = iocRead<<30 | unsafe.Sizeof(xferi{})<<16 | 'A'<<8 | 0x51
)

func (p *hwParams) interval(param int) *interval { return &p.intervals[param-firstInterval] }

// any opens every parameter to everything, as snd_pcm_hw_params_any does.
func (p *hwParams) any() {
	*p = hwParams{}
	for i := range p.masks {
		for j := range p.masks[i].bits {
			p.masks[i].bits[j] = ^uint32(0)
		}
	}
	for i := range p.intervals {
		p.intervals[i] = interval{min: 0, max: ^uint32(0)}
	}
	p.rmask = ^uint32(0)
	p.info = ^uint32(0)
}

func (p *hwParams) setMask(param int, bit uint) {
	m := &p.masks[param]
	*m = mask{}
	m.bits[bit/32] = 1 << (bit % 32)
	p.rmask |= 1 << param
}

func (p *hwParams) hasMask(param int, bit uint) bool {
	return p.masks[param].bits[bit/32]&(1<<(bit%32)) != 0
}

// setRange restricts an integer interval to [lo, hi].
func (p *hwParams) setRange(param int, lo, hi uint32) {
	*p.interval(param) = interval{min: lo, max: hi, flags: ivInteger}
	p.rmask |= 1 << param
}

// value returns the interval's single value, false if it still spans more.
func (p *hwParams) value(param int) (uint32, bool) {
	iv := p.interval(param)
	lo, hi := iv.min, iv.max
	if iv.flags&ivOpenMin != 0 {
		lo++
	}
	if iv.flags&ivOpenMax != 0 {
		hi--
	}
	return lo, lo == hi && iv.flags&ivEmpty == 0
}

// bounds returns the closed integer bounds of an interval.
func (p *hwParams) bounds(param int) (uint32, uint32) {
	iv := p.interval(param)
	lo, hi := iv.min, iv.max
	if iv.flags&ivOpenMin != 0 {
		lo++
	}
	if iv.flags&ivOpenMax != 0 && hi > 0 {
		hi--
	}
	return lo, hi
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
