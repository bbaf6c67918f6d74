//go:build amd64 || arm64

package alsa

import "unsafe"

// Compile-time checks against the values gcc reports for <sound/asound.h> on
// amd64 and arm64 (identical there). Indexing a one-element array with a
// non-zero constant does not compile, so any drift breaks the build.
var (
	_ = [1]struct{}{}[unsafe.Sizeof(hwParams{})^608]
	_ = [1]struct{}{}[unsafe.Sizeof(swParams{})^136]
	_ = [1]struct{}{}[unsafe.Sizeof(xferi{})^24]
	_ = [1]struct{}{}[unsafe.Offsetof(hwParams{}.fifoSize)^536]
	_ = [1]struct{}{}[unsafe.Offsetof(swParams{}.availMin)^16]
	_ = [1]struct{}{}[unsafe.Offsetof(swParams{}.proto)^72]

	_ = [1]struct{}{}[iocPVersion^0x80044100]
	_ = [1]struct{}{}[iocHWRefine^0xc2604110]
	_ = [1]struct{}{}[iocHWParams^0xc2604111]
	_ = [1]struct{}{}[iocSWParams^0xc0884113]
	_ = [1]struct{}{}[iocDelay^0x80084121]
	_ = [1]struct{}{}[iocPrepare^0x4140]
	_ = [1]struct{}{}[iocDrop^0x4143]
	_ = [1]struct{}{}[iocDrain^0x4144]
	_ = [1]struct{}{}[iocRewind^0x40084146]
	_ = [1]struct{}{}[iocResume^0x4147]
	_ = [1]struct{}{}[iocWriteI^0x40184150]
	_ = [1]struct{}{}[iocReadI^0x80184151]
)
