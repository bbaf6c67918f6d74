package display

import (
	"os"
	"testing"
	"unsafe"
)

// The kernel copies exactly these sizes (<linux/fb.h> on 64-bit targets);
// a wrong layout would read garbage geometry.
func TestFramebufferStructSizes(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes checked on 64-bit targets")
	}
	if n := unsafe.Sizeof(fbVarScreenInfo{}); n != 160 {
		t.Errorf("fb_var_screeninfo is %d bytes, want 160", n)
	}
	if n := unsafe.Sizeof(fbFixScreenInfo{}); n != 80 {
		t.Errorf("fb_fix_screeninfo is %d bytes, want 80", n)
	}
	if off := unsafe.Offsetof(fbFixScreenInfo{}.LineLength); off != 48 {
		t.Errorf("line_length at %d, want 48", off)
	}
}

// TestOpenFramebufferErrors: a device that is not a framebuffer is refused
// with the ioctl named, and nothing is left open.
func TestOpenFramebufferErrors(t *testing.T) {
	if _, err := OpenFramebuffer("/nonexistent/fb0", ""); err == nil {
		t.Error("missing device accepted")
	}
	f, err := os.CreateTemp(t.TempDir(), "fb")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := OpenFramebuffer(f.Name(), ""); err == nil {
		t.Error("a plain file accepted as framebuffer")
	}
}
