package aac

import "strings"

// toolStats counts the coding tools a stream used, for the tests to show
// which parts of the decoder a file exercised; and how loud its spectra
// were: the largest value the filter bank took and the channels' frames
// decoded as silence for exceeding specBound.
type toolStats struct {
	short, ms, intensity, noise, tns, pulse int
	loudest                                 float32
	refused                                 int
}

func (s toolStats) String() string {
	var names []string
	for _, t := range []struct {
		n    int
		name string
	}{{s.short, "short"}, {s.ms, "ms"}, {s.intensity, "is"}, {s.noise, "pns"}, {s.tns, "tns"}, {s.pulse, "pulse"}} {
		if t.n > 0 {
			names = append(names, t.name)
		}
	}
	if len(names) == 0 {
		return "long"
	}
	return strings.Join(names, ",")
}
