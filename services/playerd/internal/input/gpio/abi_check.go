//go:build amd64 || arm64

package gpio

import "unsafe"

// Compile-time checks against what gcc reports for <linux/gpio.h> on amd64
// and on arm64 (aarch64-linux-gnu-gcc, run under qemu-aarch64): the same
// numbers on both. Indexing a one-element array with a non-zero constant
// does not compile, so any drift breaks the build.
var (
	_ = [1]struct{}{}[unsafe.Sizeof(chipInfo{})^68]
	_ = [1]struct{}{}[unsafe.Sizeof(lineAttribute{})^16]
	_ = [1]struct{}{}[unsafe.Sizeof(lineConfigAttribute{})^24]
	_ = [1]struct{}{}[unsafe.Sizeof(lineConfig{})^272]
	_ = [1]struct{}{}[unsafe.Sizeof(lineRequest{})^592]
	_ = [1]struct{}{}[unsafe.Sizeof(lineValues{})^16]
	_ = [1]struct{}{}[unsafe.Sizeof(lineEvent{})^48]
	_ = [1]struct{}{}[unsafe.Offsetof(lineConfig{}.attrs)^32]
	_ = [1]struct{}{}[unsafe.Offsetof(lineRequest{}.config)^288]
	_ = [1]struct{}{}[unsafe.Offsetof(lineRequest{}.numLines)^560]
	_ = [1]struct{}{}[unsafe.Offsetof(lineRequest{}.fd)^588]
	_ = [1]struct{}{}[unsafe.Offsetof(lineEvent{}.id)^8]
	_ = [1]struct{}{}[unsafe.Offsetof(lineEvent{}.offset)^12]
	_ = [1]struct{}{}[unsafe.Offsetof(lineEvent{}.seqno)^16]
	_ = [1]struct{}{}[unsafe.Offsetof(lineEvent{}.lineSeqno)^20]
	_ = [1]struct{}{}[unsafe.Offsetof(lineEvent{}.padding)^24]

	_ = [1]struct{}{}[iocChipInfo^0x8044b401]
	_ = [1]struct{}{}[iocGetLine^0xc250b407]
	_ = [1]struct{}{}[iocGetValues^0xc010b40e]
)
