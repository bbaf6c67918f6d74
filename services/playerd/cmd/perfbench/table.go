package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// column is one measured program in the table.
type column struct {
	name string
	fig  *figures
}

// printTable prints the figures as the Markdown table docs/performance.md
// keeps: playerd (and an older build of it, given -baseline), MPD, and the
// ratio playerd / MPD where MPD was measured.
func printTable(w io.Writer, o options, before, pd, md *figures) {
	cols := []column{}
	if before != nil {
		cols = append(cols, column{"playerd before", before})
	}
	cols = append(cols, column{"playerd", pd})
	if md != nil {
		cols = append(cols, column{"MPD", md})
	}
	head := []string{"figure"}
	for _, c := range cols {
		head = append(head, c.name)
	}
	if md != nil {
		head = append(head, "playerd / MPD")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| %s |\n", strings.Join(head, " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(head)))
	row := func(name string, cell func(*figures) string, ratio func() string) {
		cells := []string{name}
		for _, c := range cols {
			cells = append(cells, cell(c.fig))
		}
		if md != nil {
			cells = append(cells, ratio())
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	perFormat := func(v func(string) float64) string {
		m := map[string]float64{}
		for _, f := range formats {
			m[f] = v(f)
		}
		return perFormatOf(m)
	}
	cpuRatio := func(mpd map[string]float64) func() string {
		return func() string {
			var s []string
			for _, f := range formats {
				s = append(s, fmt.Sprintf("%.1f", pd.cpu[f]/mpd[f]))
			}
			return strings.Join(s, " / ")
		}
	}
	var mpd48 map[string]float64 // row calls the ratio only when MPD was measured
	if md != nil {
		mpd48 = md.cpu
	}
	row("CPU s per audio s, MP3 / FLAC / Vorbis / AAC (MPD resampling to 48 kHz)",
		func(f *figures) string { return perFormat(func(fm string) float64 { return f.cpu[fm] }) },
		cpuRatio(mpd48))
	if md != nil {
		row("same, MPD at the file's own rate",
			func(f *figures) string {
				if f != md {
					return "″"
				}
				return perFormat(func(fm string) float64 { return f.cpuNative[fm] })
			},
			cpuRatio(md.cpuNative))
	}
	if o.library > 0 {
		row(fmt.Sprintf("first scan of a never-scanned %d-track library (first answer after)", o.library),
			func(f *figures) string { return fmt.Sprintf("%.2f s (%.0f ms)", f.scan.Seconds(), ms(f.ready)) },
			func() string { return fmt.Sprintf("%.2f", pd.scan.Seconds()/md.scan.Seconds()) })
	}
	row("server CPU per status request",
		func(f *figures) string { return fmt.Sprintf("%.1f µs", f.statusUS) },
		func() string { return fmt.Sprintf("%.1f", pd.statusUS/md.statusUS) })
	lib := "small library"
	if o.library > 0 {
		lib = fmt.Sprintf("%d-track library", o.library)
	}
	row("idle anonymous RSS, "+lib,
		func(f *figures) string { return fmt.Sprintf("%.1f MB", f.rssMB) },
		func() string { return fmt.Sprintf("%.1f", pd.rssMB/md.rssMB) })
	row("play command → first audible sample in the output, FLAC (min–max; ratio of medians)",
		func(f *figures) string { return spread(f.first) + " ms" },
		func() string { return fmt.Sprintf("%.1f", median(pd.first)/median(md.first)) })
	row("same, MP3",
		func(f *figures) string { return spread(f.firstMP3) + " ms" },
		func() string { return fmt.Sprintf("%.1f", median(pd.firstMP3)/median(md.firstMP3)) })
}

func spread(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f–%.1f", slices.Min(v), slices.Max(v))
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
