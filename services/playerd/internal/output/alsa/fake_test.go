package alsa

import (
	"slices"
	"syscall"
	"unsafe"
)

// fakeConn models a device: what it offers, and a script of what its
// transfers and resumes return. Refine intersects the request with the
// offer the way the kernel does for a plain list or range constraint.
type fakeConn struct {
	rewindable            int // frames Rewind may take back
	rewindErr             error
	info                  uint32 // hw_params.info as HW_PARAMS returns it
	formats               []Format
	rates                 []uint32 // the offered rates; a list, like most hardware
	chMin, chMax          uint32
	periodMin, periodMx   uint32
	periodsMin, periodsMx uint32
	busy                  bool // HW_PARAMS fails with EBUSY

	// writes is consumed one entry per WriteI: an error, or (when err is
	// nil) the most frames to accept; a missing entry accepts everything.
	writes  []step
	resumes []error
	prepErr []error
	delay   int
	delErr  error

	calls  []string
	played []byte
	frame  int
	closed bool
	chosen hwParams
	sw     swParams
}

type step struct {
	err   error
	limit int
}

func newFake() *fakeConn {
	return &fakeConn{
		formats: []Format{S16LE, S32LE}, rates: []uint32{44100, 48000, 96000},
		chMin: 1, chMax: 8, periodMin: 64, periodMx: 16384, periodsMin: 2, periodsMx: 32,
	}
}

func (f *fakeConn) restrict(hp *hwParams, param int, lo, hi uint32) bool {
	iv := hp.interval(param)
	a, b := hp.bounds(param)
	a, b = max(a, lo), min(b, hi)
	if a > b {
		return false
	}
	*iv = interval{min: a, max: b, flags: iv.flags &^ (ivOpenMin | ivOpenMax)}
	return true
}

func (f *fakeConn) HWRefine(hp *hwParams) error {
	f.calls = append(f.calls, "refine")
	if !hp.hasMask(paramAccess, accessRWInterleaved) {
		return syscall.EINVAL
	}
	var m mask
	for _, ft := range f.formats {
		if hp.hasMask(paramFormat, uint(ft)) {
			m.bits[uint(ft)/32] |= 1 << (uint(ft) % 32)
		}
	}
	if m == (mask{}) {
		return syscall.EINVAL
	}
	hp.masks[paramFormat] = m
	lo, hi := hp.bounds(paramRate)
	var rates []uint32
	for _, r := range f.rates {
		if r >= lo && r <= hi {
			rates = append(rates, r)
		}
	}
	if len(rates) == 0 {
		return syscall.EINVAL
	}
	*hp.interval(paramRate) = interval{min: slices.Min(rates), max: slices.Max(rates), flags: ivInteger}
	if !f.restrict(hp, paramChannels, f.chMin, f.chMax) ||
		!f.restrict(hp, paramPeriodSize, f.periodMin, f.periodMx) ||
		!f.restrict(hp, paramPeriods, f.periodsMin, f.periodsMx) {
		return syscall.EINVAL
	}
	plo, phi := hp.bounds(paramPeriodSize)
	nlo, nhi := hp.bounds(paramPeriods)
	*hp.interval(paramBufferSize) = interval{min: plo * nlo, max: phi * nhi, flags: ivInteger}
	hp.rmask = 0
	return nil
}

// HWParams refines, then picks the lowest value of anything left open
// (the kernel picks the largest buffer; the writer must not leave it open).
func (f *fakeConn) HWParams(hp *hwParams) error {
	if f.busy {
		return syscall.EBUSY
	}
	if err := f.HWRefine(hp); err != nil {
		return err
	}
	f.calls[len(f.calls)-1] = "hw_params"
	for _, p := range []int{paramChannels, paramRate, paramPeriodSize, paramPeriods} {
		lo, _ := hp.bounds(p)
		*hp.interval(p) = interval{min: lo, max: lo, flags: ivInteger}
	}
	ps, _ := hp.value(paramPeriodSize)
	n, _ := hp.value(paramPeriods)
	*hp.interval(paramBufferSize) = interval{min: ps * n, max: ps * n, flags: ivInteger}
	for _, ft := range f.formats {
		if hp.hasMask(paramFormat, uint(ft)) {
			hp.setMask(paramFormat, uint(ft))
			ch, _ := hp.value(paramChannels)
			f.frame = int(ch) * ft.Bytes()
			break
		}
	}
	hp.info = f.info
	f.chosen = *hp
	return nil
}

func (f *fakeConn) SWParams(p *swParams) error {
	f.calls = append(f.calls, "sw_params")
	f.sw = *p
	return nil
}

func (f *fakeConn) Prepare() error {
	f.calls = append(f.calls, "prepare")
	if len(f.prepErr) > 0 {
		err := f.prepErr[0]
		f.prepErr = f.prepErr[1:]
		return err
	}
	return nil
}

func (f *fakeConn) Drop() error  { f.calls = append(f.calls, "drop"); return nil }
func (f *fakeConn) Drain() error { f.calls = append(f.calls, "drain"); return nil }

func (f *fakeConn) Resume() error {
	f.calls = append(f.calls, "resume")
	if len(f.resumes) == 0 {
		return nil
	}
	err := f.resumes[0]
	f.resumes = f.resumes[1:]
	return err
}

func (f *fakeConn) WriteI(x *xferi) error {
	n := int(x.frames)
	if len(f.writes) > 0 {
		s := f.writes[0]
		f.writes = f.writes[1:]
		if s.err != nil {
			f.calls = append(f.calls, "write:"+s.err.(syscall.Errno).Error())
			return s.err
		}
		n = min(n, s.limit)
	}
	f.calls = append(f.calls, "write")
	f.played = append(f.played, unsafe.Slice((*byte)(x.buf), n*f.frame)...)
	x.result = n
	return nil
}

func (f *fakeConn) Delay(d *int) error { *d = f.delay; return f.delErr }
func (f *fakeConn) Rewind(n *uint) error {
	f.calls = append(f.calls, "rewind")
	if f.rewindErr != nil {
		return f.rewindErr
	}
	*n = min(*n, uint(f.rewindable))
	f.rewindable -= int(*n)
	return nil
}

func (f *fakeConn) Close() error { f.closed = true; return nil }
