package members

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/syncapi"
)

const (
	self  = "AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA"
	other = "BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB"
)

// What a parent decided is on disk when the call returns, mode 0600, and
// read back after a restart; refusals change nothing.
func TestStoreKeeps(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Media(); !m.All || len(s.Boxes()) != 0 {
		t.Fatalf("new: %+v %+v", m, s.Boxes())
	}
	if ch, err := s.Add(Box{DeviceID: other, Name: "oma"}, self); err != nil || !ch {
		t.Fatal(ch, err)
	}
	if ch, err := s.Add(Box{DeviceID: other, Name: "oma", Address: "dynamic"}, self); err != nil || ch {
		t.Fatalf("the same box again: changed %v %v", ch, err)
	}
	if err := s.SetMedia(syncapi.Media{Folders: []string{"Lieder", "Hörspiele"}}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		b    Box
		code string
	}{
		{Box{DeviceID: self, Name: "me"}, "household_self"},
		{Box{DeviceID: "x", Name: "a"}, "household_bad_device"},
		{Box{DeviceID: other[:62] + "C", Name: ""}, "household_bad_name"},
		{Box{DeviceID: other[:62] + "C", Name: "a", Address: "udp://x:1"}, "household_bad_address"},
	} {
		if _, err := s.Add(bad.b, self); fault.CodeOf(err) != bad.code {
			t.Errorf("%+v: %v, want %s", bad.b, err, bad.code)
		}
	}
	for _, f := range []string{"a/b", "..", ".stfolder", "x*", " x"} {
		if err := s.SetMedia(syncapi.Media{Folders: []string{f}}); fault.CodeOf(err) != "household_bad_folder" {
			t.Errorf("folder %q: %v", f, err)
		}
	}
	if err := s.Remove(self); fault.KindOf(err) != fault.NotFound {
		t.Errorf("removing a box not in it: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, "household.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("household.json: %v %v", fi, err)
	}
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b := again.Boxes(); len(b) != 1 || b[0] != (Box{DeviceID: other, Name: "oma", Address: "dynamic"}) {
		t.Errorf("after a restart: %+v", b)
	}
	if m := again.Media(); m.All || len(m.Folders) != 2 || m.Folders[0] != "Hörspiele" {
		t.Errorf("media after a restart: %+v", m)
	}
	if err := again.Remove(other); err != nil || len(again.Boxes()) != 0 {
		t.Fatal(err)
	}
	for i := range MaxBoxes {
		id := []byte(other)
		id[0] = byte('A' + i)
		if _, err := again.Add(Box{DeviceID: string(id), Name: "b"}, "C"+self[1:]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := again.Add(Box{DeviceID: "Z" + other[1:], Name: "b"}, self); fault.CodeOf(err) != "household_full" {
		t.Errorf("a ninth box: %v", err)
	}
}
