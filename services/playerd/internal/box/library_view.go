package box

import (
	"slices"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// LibraryView is the catalog as GET /api/library shows it: each folder of
// files and each file with its measured loudness and the gain normalisation
// gives it in the mode set now. The catalog itself stays as it is (its
// folders are everyone's); the view decorates copies.
type LibraryView struct {
	*Catalog
	b *Box
}

// LibraryView is the catalog for GET /api/library.
func (b *Box) LibraryView() LibraryView { return LibraryView{Catalog: b.catalog, b: b} }

// Folders lists the catalog's folders, files with their loudness.
func (v LibraryView) Folders() []library.Folder {
	folders := v.Catalog.Folders()
	mode := v.b.settings.Get().Audio.Normalize
	lv := player.MeasuredLevels(v.b.loudness)
	out := make([]library.Folder, len(folders))
	for i, f := range folders {
		out[i] = f
		if f.Kind != library.KindLocal {
			continue
		}
		if r, ok := v.b.loudness.Folder(f.ID); ok {
			// The folder's gain is the one the folder mode gives it,
			// whichever mode is set.
			out[i].Loudness = loudnessOf(r.Integrated, r.TruePeak, r.Range, r.Silent(),
				player.Choose(player.NormalizeFolder, lv, f, library.Track{}, false))
		}
		out[i].Tracks = slices.Clone(f.Tracks)
		for j, t := range out[i].Tracks {
			n := player.Choose(mode, lv, f, t, false)
			l := &library.Loudness{GainDB: n.GainDB, By: n.By}
			if r, ok := v.b.loudness.Track(t.Path); ok {
				l = loudnessOf(r.Integrated, r.TruePeak, r.Range, r.Silent(), n)
			}
			out[i].Tracks[j].Loudness = l
		}
	}
	return out
}

func loudnessOf(integrated, peak, lra float64, silent bool, n player.Normalization) *library.Loudness {
	l := &library.Loudness{Measured: true, TruePeakDBTP: &peak, RangeLU: &lra, GainDB: n.GainDB, By: n.By}
	if !silent {
		l.LUFS = &integrated
	}
	return l
}
