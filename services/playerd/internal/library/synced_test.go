package library

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// A media folder shared by Syncthing: the files it is still receiving
// (".syncthing.NAME.tmp", "~syncthing~NAME.tmp") and its own (.stfolder,
// .stversions) are never listed; a track appears once it is renamed into
// place.
func TestSyncthingFilesNotListed(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "Folge")
	tone := testmedia.Tone(0.2, 44100, 440)
	must(t, os.MkdirAll(filepath.Join(root, ".stfolder"), 0o755))
	must(t, testmedia.WriteTone(filepath.Join(root, ".stversions", "Folge", "alt.wav"), 0.1, 44100, 440))
	must(t, testmedia.WriteTone(filepath.Join(dir, "01.wav"), 0.2, 44100, 440))
	must(t, os.WriteFile(filepath.Join(dir, ".syncthing.02.wav.tmp"), tone[:len(tone)/2], 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "~syncthing~03.wav.tmp"), tone[:100], 0o644))
	must(t, testmedia.WriteTone(filepath.Join(root, "Nur halb", ".syncthing.01.wav.tmp"), 0.2, 44100, 440))
	l := New(root, "", nil)
	st, err := l.Scan()
	if err != nil {
		t.Fatal(err)
	}
	if st.Folders != 1 || st.Tracks != 1 || len(l.Report().Problems) != 0 {
		t.Fatalf("stats %+v, problems %v", st, l.Report().Problems)
	}
	must(t, os.WriteFile(filepath.Join(dir, ".syncthing.02.wav.tmp"), tone, 0o644))
	must(t, os.Rename(filepath.Join(dir, ".syncthing.02.wav.tmp"), filepath.Join(dir, "02.wav")))
	if st, err = l.Scan(); err != nil || st.Tracks != 2 {
		t.Fatalf("after the rename: %+v %v", st, err)
	}
}
