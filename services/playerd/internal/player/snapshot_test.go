package player

import "testing"

// TestSnapshotMovesInPlace: within a second of playing, the periods move the
// position of one snapshot; a new snapshot comes with the next whole second
// (or any other change), and each reads consistently.
func TestSnapshotMovesInPlace(t *testing.T) {
	f := folderOf(t, "f", 3)
	h := newHarness(t, catalog{"f": f}, Config{}, &recSink{perWrite: 2e6})
	h.do(Command{Action: ActFolder, FolderID: "f"})
	snaps := map[*snapshot]map[float64]bool{}
	var last *snapshot
	for {
		s := h.p.snap.Load()
		st := s.status()
		if st.State != Playing || st.Position >= 2 {
			break
		}
		if snaps[s] == nil {
			snaps[s] = map[float64]bool{}
		}
		snaps[s][st.Position] = true
		if last != nil && s != last && int(s.st.Position) == int(last.st.Position) && SamePlayback(s.st, last.st) {
			t.Fatalf("a new snapshot within second %d for a position alone", int(s.st.Position))
		}
		last = s
	}
	moved := 0
	for _, pos := range snaps {
		if len(pos) > 1 {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("no snapshot's position moved in place (%d snapshots)", len(snaps))
	}
	if len(snaps) > 4 {
		t.Errorf("%d snapshots for 2 s of playing, want about one a second", len(snaps))
	}
}
