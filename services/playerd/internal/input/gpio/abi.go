// Package gpio reads button presses from the Linux GPIO character device
// (/dev/gpiochipN) with the v2 line-event ioctls: edge events with the
// kernel's debouncing and bias, without sysfs and without cgo. Linux only,
// like the box.
package gpio

// The structures below mirror <linux/gpio.h> (uAPI v2). Every field has a
// fixed width and the kernel pads explicitly, so the layout is the same on
// every 64-bit target; abi_check.go pins sizes, offsets and ioctl numbers.

const (
	maxNameSize = 32 // GPIO_MAX_NAME_SIZE
	linesMax    = 64 // GPIO_V2_LINES_MAX
	attrsMax    = 10 // GPIO_V2_LINE_NUM_ATTRS_MAX
)

// Line flags (enum gpio_v2_line_flag).
const (
	flagActiveLow    = 1 << 1
	flagInput        = 1 << 2
	flagEdgeRising   = 1 << 4
	flagEdgeFalling  = 1 << 5
	flagBiasPullUp   = 1 << 8
	flagBiasPullDown = 1 << 9
	flagBiasDisabled = 1 << 10
)

const attrDebounce = 3 // GPIO_V2_LINE_ATTR_ID_DEBOUNCE

// Event ids (enum gpio_v2_line_event_id).
const (
	eventRising  = 1
	eventFalling = 2
)

type chipInfo struct {
	name  [maxNameSize]byte
	label [maxNameSize]byte
	lines uint32
}

// lineAttribute is struct gpio_v2_line_attribute; value is the union of
// flags, values and debounce_period_us (the last in its low 32 bits, which
// on little-endian targets is where the kernel reads it).
type lineAttribute struct {
	id      uint32
	padding uint32
	value   uint64
}

type lineConfigAttribute struct {
	attr lineAttribute
	mask uint64
}

type lineConfig struct {
	flags    uint64
	numAttrs uint32
	padding  [5]uint32
	attrs    [attrsMax]lineConfigAttribute
}

type lineRequest struct {
	offsets         [linesMax]uint32
	consumer        [maxNameSize]byte
	config          lineConfig
	numLines        uint32
	eventBufferSize uint32
	padding         [5]uint32
	fd              int32
}

type lineValues struct {
	bits uint64
	mask uint64
}

type lineEvent struct {
	timestampNs uint64
	id          uint32
	offset      uint32
	seqno       uint32
	lineSeqno   uint32
	padding     [6]uint32
}

// ioctl numbers: _IOR/_IOWR(0xB4, nr, struct), as <linux/gpio.h> defines
// them, spelled out so abi_check.go can compare them with what gcc says.
const (
	iocChipInfo  = 2<<30 | 68<<16 | 0xB4<<8 | 0x01  // GPIO_GET_CHIPINFO_IOCTL
	iocGetLine   = 3<<30 | 592<<16 | 0xB4<<8 | 0x07 // GPIO_V2_GET_LINE_IOCTL
	iocGetValues = 3<<30 | 16<<16 | 0xB4<<8 | 0x0E  // GPIO_V2_LINE_GET_VALUES_IOCTL
)
