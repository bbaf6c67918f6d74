// Package bq25792test records and replays register traffic of a
// bq25792.Bus, so driver tests run without hardware and a run on a real
// board produces fixtures.
package bq25792test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Kind is the kind of one register access.
type Kind uint8

// Access kinds.
const (
	Read8 Kind = iota + 1
	Write8
	Read16
	Write16
)

func (k Kind) String() string {
	switch k {
	case Read8:
		return "Read8"
	case Write8:
		return "Write8"
	case Read16:
		return "Read16"
	case Write16:
		return "Write16"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// IO is one register access: what was read or written. Err, in a playback,
// makes the access fail.
type IO struct {
	Kind Kind
	Reg  byte
	Val  uint16
	Err  error
}

// GoString prints the access as a Go literal, for pasting into fixtures.
func (o IO) GoString() string {
	if o.Err != nil {
		return fmt.Sprintf("{Kind: bq25792test.%s, Reg: 0x%02X, Err: errors.New(%q)}", o.Kind, o.Reg, o.Err.Error())
	}
	return fmt.Sprintf("{Kind: bq25792test.%s, Reg: 0x%02X, Val: 0x%04X}", o.Kind, o.Reg, o.Val)
}

// ErrUnexpected is returned for an access that differs from the next
// expected one, or comes after the expected ones ran out.
var ErrUnexpected = errors.New("bq25792test: unexpected register access")

// Playback is a bus that expects exactly Ops, in order. Reads return the
// recorded values; writes must match. Close reports whatever went wrong.
type Playback struct {
	mu   sync.Mutex
	Ops  []IO
	next int
	errs []string
}

// Close returns an error if an access was unexpected or an expected one
// never came.
func (p *Playback) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	errs := p.errs
	if p.next < len(p.Ops) {
		errs = append(errs, fmt.Sprintf("%d expected accesses not made, next %#v", len(p.Ops)-p.next, p.Ops[p.next]))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnexpected, strings.Join(errs, "; "))
}

func (p *Playback) do(k Kind, reg byte, val uint16) (uint16, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := IO{Kind: k, Reg: reg, Val: val}
	if p.next >= len(p.Ops) {
		p.errs = append(p.errs, fmt.Sprintf("extra %#v", got))
		return 0, ErrUnexpected
	}
	want := p.Ops[p.next]
	p.next++
	write := k == Write8 || k == Write16
	if want.Kind != k || want.Reg != reg || (write && want.Val != val) {
		p.errs = append(p.errs, fmt.Sprintf("access %d: got %#v, want %#v", p.next-1, got, want))
		return 0, ErrUnexpected
	}
	if want.Err != nil {
		return 0, want.Err
	}
	return want.Val, nil
}

// ReadRegU8 implements bq25792.Bus.
func (p *Playback) ReadRegU8(reg byte) (byte, error) {
	v, err := p.do(Read8, reg, 0)
	return byte(v), err
}

// WriteRegU8 implements bq25792.Bus.
func (p *Playback) WriteRegU8(reg byte, v byte) error {
	_, err := p.do(Write8, reg, uint16(v))
	return err
}

// ReadRegU16BE implements bq25792.Bus.
func (p *Playback) ReadRegU16BE(reg byte) (uint16, error) { return p.do(Read16, reg, 0) }

// WriteRegU16BE implements bq25792.Bus.
func (p *Playback) WriteRegU16BE(reg byte, v uint16) error {
	_, err := p.do(Write16, reg, v)
	return err
}

// Bus is the register access Record wraps (the same as bq25792.Bus; kept
// local to avoid an import cycle with the driver's tests).
type Bus interface {
	ReadRegU8(reg byte) (byte, error)
	WriteRegU8(reg byte, value byte) error
	ReadRegU16BE(reg byte) (uint16, error)
	WriteRegU16BE(reg byte, value uint16) error
}

// Record passes accesses to Bus and keeps them in Ops.
type Record struct {
	Bus Bus
	mu  sync.Mutex
	Ops []IO
}

func (r *Record) add(o IO) {
	r.mu.Lock()
	r.Ops = append(r.Ops, o)
	r.mu.Unlock()
}

// ReadRegU8 implements bq25792.Bus.
func (r *Record) ReadRegU8(reg byte) (byte, error) {
	v, err := r.Bus.ReadRegU8(reg)
	r.add(IO{Kind: Read8, Reg: reg, Val: uint16(v), Err: err})
	return v, err
}

// WriteRegU8 implements bq25792.Bus.
func (r *Record) WriteRegU8(reg byte, v byte) error {
	err := r.Bus.WriteRegU8(reg, v)
	r.add(IO{Kind: Write8, Reg: reg, Val: uint16(v), Err: err})
	return err
}

// ReadRegU16BE implements bq25792.Bus.
func (r *Record) ReadRegU16BE(reg byte) (uint16, error) {
	v, err := r.Bus.ReadRegU16BE(reg)
	r.add(IO{Kind: Read16, Reg: reg, Val: v, Err: err})
	return v, err
}

// WriteRegU16BE implements bq25792.Bus.
func (r *Record) WriteRegU16BE(reg byte, v uint16) error {
	err := r.Bus.WriteRegU16BE(reg, v)
	r.add(IO{Kind: Write16, Reg: reg, Val: v, Err: err})
	return err
}
