package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// results are the run's figures, for the report and the exit status.
type results struct {
	p50, p99, pmax time.Duration
	polls          int
	trends         []trend
	violations     []violation
}

func (r results) ok(b bounds) bool {
	if len(r.violations) > 0 || r.polls == 0 || r.p99 >= b.p99 {
		return false
	}
	for _, t := range r.trends {
		if !t.pass() {
			return false
		}
	}
	return true
}

// report computes the figures, writes report.md, samples.csv and the
// plots into -out (and into -docs), logs the summary and says whether the
// box passed.
func (s *soak) report() (bool, error) {
	samples := s.sampler.all()
	polls := s.rec.snapshotPolls()
	var lat []time.Duration
	for _, p := range polls {
		lat = append(lat, p.latency)
	}
	res := results{p50: percentile(lat, 0.5), p99: percentile(lat, 0.99), pmax: percentile(lat, 1), polls: len(lat)}
	const mib = 1 << 20
	b := s.cfg.bounds
	for _, t := range []struct {
		name, unit       string
		bound, allowance float64
		y                func(sample) float64
	}{
		{"goroutines", "goroutines", b.goroutines, allowances.goroutines, func(x sample) float64 { return float64(x.goroutines) }},
		{"open files", "files", b.files, allowances.files, func(x sample) float64 { return float64(x.files) }},
		{"heap in use", "MiB", b.heapMiB, allowances.heapMiB, func(x sample) float64 { return float64(x.heapInUse) / mib }},
		{"RSS", "MiB", b.rssMiB, allowances.rssMiB, func(x sample) float64 { return float64(x.rss) / mib }},
	} {
		tr := trend{name: t.name, unit: t.unit, bound: t.bound, allowance: t.allowance}
		tr.slope, tr.se, tr.n, tr.lives, tr.span = fitWithin(samples, s.cfg.warmUp, t.y)
		res.trends = append(res.trends, tr)
	}
	live := trend{name: "heap live (after GC)", unit: "MiB", bound: math.Inf(1)}
	live.slope, live.se, live.n, live.lives, live.span = fitWithin(samples, s.cfg.warmUp, func(x sample) float64 { return float64(x.heapLive) / mib })
	if res.p99 >= b.p99 {
		s.rec.violate(0, "p99", "the pollers' status p99 is %v, bound %v", res.p99, b.p99)
	}
	for _, t := range res.trends {
		if !t.pass() {
			s.rec.violate(0, "trend", "%s grow %+.2f %s per hour (95%% %+.2f..%+.2f), bound %g; %+.1f over the life fitted, allowance %g",
				t.name, t.slope, t.unit, t.lo(), t.hi(), t.bound, t.rise(), t.allowance)
		}
	}
	res.violations = s.rec.snapshotViolations()

	plots := s.plots(samples, polls)
	for name, svg := range plots {
		if err := os.WriteFile(filepath.Join(s.cfg.out, name), svg, 0o644); err != nil {
			return false, err
		}
	}
	if err := os.WriteFile(filepath.Join(s.cfg.out, "samples.csv"), samplesCSV(samples, s.started), 0o644); err != nil {
		return false, err
	}
	var vb bytes.Buffer
	for _, v := range res.violations {
		fmt.Fprintf(&vb, "%.1f min, life %d, %s: %s\n", v.at.Sub(s.started).Minutes(), v.life, v.kind, v.what)
	}
	if err := os.WriteFile(filepath.Join(s.cfg.out, "violations.txt"), vb.Bytes(), 0o644); err != nil {
		return false, err
	}
	var pb bytes.Buffer
	pb.WriteString("seconds,latency_ms,who\n")
	for _, p := range polls {
		fmt.Fprintf(&pb, "%.3f,%.2f,%s\n", p.at.Sub(s.started).Seconds(), float64(p.latency)/float64(time.Millisecond), p.who)
	}
	if err := os.WriteFile(filepath.Join(s.cfg.out, "polls.csv"), pb.Bytes(), 0o644); err != nil {
		return false, err
	}
	md := s.markdown(res, append(res.trends, live), "")
	if err := os.WriteFile(filepath.Join(s.cfg.out, "report.md"), md, 0o644); err != nil {
		return false, err
	}
	if s.cfg.docs != "" {
		if err := s.writeDocs(res, append(res.trends, live), plots); err != nil {
			return false, err
		}
	}
	for _, t := range append(res.trends, live) {
		s.log.Info("trend", "of", t.name, "per_hour", fmt.Sprintf("%+.2f %s", t.slope, t.unit), "ci95", fmt.Sprintf("%+.2f..%+.2f", t.lo(), t.hi()),
			"bound", t.bound, "samples", t.n, "lives", t.lives)
	}
	ok := res.ok(b)
	s.log.Info("soak done", "ok", ok, "violations", len(res.violations), "status_p50", res.p50, "status_p99", res.p99, "status_max", res.pmax,
		"polls", res.polls, "kills", s.rec.snapshotCounts()["kills"], "report", filepath.Join(s.cfg.out, "report.md"))
	return ok, nil
}

// plots are the charts of the run: RSS, heap, goroutines, open files, p99.
func (s *soak) plots(samples []sample, polls []poll) map[string][]byte {
	min := func(t time.Time) float64 { return t.Sub(s.started).Minutes() }
	var kills []float64
	series := func(y func(sample) float64) [][2]float64 {
		var pts [][2]float64
		life := 0
		for _, x := range samples {
			if x.life != life && life != 0 {
				pts = append(pts, [2]float64{min(x.t), math.NaN()})
			}
			life = x.life
			pts = append(pts, [2]float64{min(x.t), y(x)})
		}
		return pts
	}
	lifeStart := map[int]time.Time{}
	for _, x := range samples {
		if _, ok := lifeStart[x.life]; !ok {
			lifeStart[x.life] = x.t.Add(-x.age)
		}
	}
	for l, t := range lifeStart {
		if l > 1 {
			kills = append(kills, min(t))
		}
	}
	const mib = 1 << 20
	p99 := float64(s.cfg.bounds.p99) / float64(time.Millisecond)
	out := map[string][]byte{
		"rss.svg": chart{title: "playerd RSS (/proc)", yLabel: "MiB", marks: kills,
			lines: []line{{"RSS", "#1f77b4", series(func(x sample) float64 { return float64(x.rss) / mib })}}}.svg(),
		"heap.svg": chart{title: "playerd heap (GET /api/admin/system)", yLabel: "MiB", marks: kills,
			lines: []line{{"heap in use", "#ff7f0e", series(func(x sample) float64 { return float64(x.heapInUse) / mib })},
				{"heap live after GC", "#2ca02c", series(func(x sample) float64 { return float64(x.heapLive) / mib })}}}.svg(),
		"goroutines.svg": chart{title: "playerd goroutines", yLabel: "goroutines", marks: kills,
			lines: []line{{"goroutines", "#9467bd", series(func(x sample) float64 { return float64(x.goroutines) })}}}.svg(),
		"files.svg": chart{title: "playerd open files (/proc/<pid>/fd)", yLabel: "descriptors", marks: kills,
			lines: []line{{"open files", "#8c564b", series(func(x sample) float64 { return float64(x.files) })}}}.svg(),
		"cpu.svg": chart{title: "playerd CPU, and its time waiting for a CPU (the machine's load)", yLabel: "% of one core", marks: kills,
			lines: []line{{"CPU", "#17becf", rate(samples, s.started, func(x sample) time.Duration { return x.cpu })},
				{"waiting for a CPU", "#bcbd22", rate(samples, s.started, func(x sample) time.Duration { return x.wait })}}}.svg(),
		"p99.svg": chart{title: "status p99 of the pollers, per minute", yLabel: "ms", marks: kills, bound: &p99,
			lines: []line{{"p99", "#d62728", perMinute(polls, s.started, 0.99)}, {"p50", "#7f7f7f", perMinute(polls, s.started, 0.5)}}}.svg(),
	}
	return out
}

// usage is playerd's CPU time and run-queue wait over the samples, and the
// time they span, in seconds (each life counted from its first sample).
func usage(samples []sample) (cpu, wait, span float64) {
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if a.life == b.life {
			cpu += max(0, (b.cpu - a.cpu).Seconds())
			wait += max(0, (b.wait - a.wait).Seconds())
			span += b.t.Sub(a.t).Seconds()
		}
	}
	return cpu, wait, max(span, 1e-9)
}

// rate is how fast a counter of time grows between samples of one life,
// in percent of one core.
func rate(samples []sample, start time.Time, v func(sample) time.Duration) [][2]float64 {
	var pts [][2]float64
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if a.life != b.life {
			pts = append(pts, [2]float64{b.t.Sub(start).Minutes(), math.NaN()})
			continue
		}
		if dt := b.t.Sub(a.t); dt > 0 {
			pts = append(pts, [2]float64{b.t.Sub(start).Minutes(), max(0, 100*float64(v(b)-v(a))/float64(dt))})
		}
	}
	return pts
}

// perMinute is the q-quantile of the polls' latency in each minute, in ms.
func perMinute(polls []poll, start time.Time, q float64) [][2]float64 {
	by := map[int][]time.Duration{}
	for _, p := range polls {
		m := int(p.at.Sub(start).Minutes())
		by[m] = append(by[m], p.latency)
	}
	keys := make([]int, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var pts [][2]float64
	for _, k := range keys {
		pts = append(pts, [2]float64{float64(k) + 0.5, float64(percentile(by[k], q)) / float64(time.Millisecond)})
	}
	return pts
}

func samplesCSV(samples []sample, start time.Time) []byte {
	var b bytes.Buffer
	b.WriteString("seconds,life,age_seconds,rss_bytes,open_files,goroutines,heap_in_use_bytes,heap_live_bytes,cpu_seconds,runqueue_wait_seconds\n")
	for _, x := range samples {
		fmt.Fprintf(&b, "%.1f,%d,%.1f,%d,%d,%d,%d,%d,%.2f,%.3f\n", x.t.Sub(start).Seconds(), x.life, x.age.Seconds(), x.rss, x.files, x.goroutines,
			x.heapInUse, x.heapLive, x.cpu.Seconds(), x.wait.Seconds())
	}
	return b.Bytes()
}

// markdown is the report; imgDir prefixes the plots' file names.
func (s *soak) markdown(res results, trends []trend, imgDir string) []byte {
	var b bytes.Buffer
	counts := s.rec.snapshotCounts()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "Command: `make soak SOAK=%v SOAK_SEED=%d` (`go run ./services/playerd/cmd/soak -seed %d -duration %v …`), %s, on %d CPUs shared with other work: load average %s at the end.\n\n",
		s.cfg.duration, s.cfg.seed, s.cfg.seed, s.cfg.duration, time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| SIGKILLs of playerd (and restarts) | %d |\n", counts["kills"])
	s.rec.mu.Lock()
	var took []time.Duration
	for _, r := range s.rec.restarts {
		took = append(took, r.took)
	}
	hidden := append([]int(nil), s.rec.hidden...)
	s.rec.mu.Unlock()
	fmt.Fprintf(&b, "| start after a kill to the API ready, median / max | %v / %v |\n", percentile(took, 0.5).Round(time.Millisecond), percentile(took, 1).Round(time.Millisecond))
	for _, k := range sortedCountKeys(counts) {
		if k != "kills" {
			fmt.Fprintf(&b, "| %s | %d |\n", k, counts[k])
		}
	}
	if len(hidden) > 0 {
		fmt.Fprintf(&b, "| upload temporaries in the media folders after the last start | %d |\n", hidden[len(hidden)-1])
	}
	dataBytes, dataFiles := du(s.box.data)
	speechBytes, speechFiles := du(filepath.Join(s.box.data, "speech-cache"))
	mediaBytes, mediaFiles := du(s.box.media)
	fmt.Fprintf(&b, "| the data directory at the end: all / the speech cache | %d files, %.1f MiB / %d files, %.1f MiB |\n", dataFiles, float64(dataBytes)/(1<<20), speechFiles, float64(speechBytes)/(1<<20))
	fmt.Fprintf(&b, "| the media library at the end | %d files, %.1f MiB |\n", mediaFiles, float64(mediaBytes)/(1<<20))
	cpu, wait, span := usage(s.sampler.all())
	fmt.Fprintf(&b, "| playerd's CPU, average; its threads' time waiting for a CPU | %.1f%% of a core; %.1f%% |\n", 100*cpu/span, 100*wait/span)
	fmt.Fprintf(&b, "| status requests of the pollers (GET /api/status, v1 /state) | %d |\n", res.polls)
	fmt.Fprintf(&b, "| their latency p50 / p99 / max | %v / %v / %v (bound of the p99: %v) |\n\n",
		res.p50.Round(100*time.Microsecond), res.p99.Round(100*time.Microsecond), res.pmax.Round(time.Millisecond), s.cfg.bounds.p99)

	fmt.Fprintf(&b, "Trends: fitted to the long life without kills at the end of the run, after %v of warm-up (95%% interval allowing for neighbouring samples being alike). A life of %v or more is held to the bound per hour; a shorter one to the allowance for its whole rise.\n\n", s.cfg.warmUp, longEnough)
	fmt.Fprintf(&b, "| resource | slope per hour | 95%% interval | bound per hour | rise over the %.0f min fitted | allowance | samples | |\n|---|---|---|---|---|---|---|---|\n", trends[0].span*60)
	for _, t := range trends {
		bound, allowance, verdict := "–", "–", "(for information)"
		if !math.IsInf(t.bound, 1) {
			bound, allowance = fmt.Sprintf("%g", t.bound), fmt.Sprintf("%g", t.allowance)
			verdict = map[bool]string{true: "pass", false: "**fail**"}[t.pass()]
			if t.span*float64(time.Hour) < float64(longEnough) {
				verdict += " (short: the allowance)"
			}
		}
		fmt.Fprintf(&b, "| %s | %+.2f %s | %+.2f .. %+.2f | %s | %+.1f | %s | %d | %s |\n", t.name, t.slope, t.unit, t.lo(), t.hi(), bound, t.rise(), allowance, t.n, verdict)
	}
	b.WriteString("\n")
	for _, img := range []string{"rss.svg", "heap.svg", "goroutines.svg", "files.svg", "p99.svg", "cpu.svg"} {
		fmt.Fprintf(&b, "![%s](%s%s)\n\n", strings.TrimSuffix(img, ".svg"), imgDir, img)
	}

	byKind := map[string][]violation{}
	for _, v := range res.violations {
		byKind[v.kind] = append(byKind[v.kind], v)
	}
	if len(res.violations) == 0 {
		b.WriteString("Violations: none.\n\n")
	} else {
		fmt.Fprintf(&b, "Violations: %d.\n\n", len(res.violations))
		for _, k := range sortedViolationKinds(byKind) {
			vs := byKind[k]
			fmt.Fprintf(&b, "- %s: %d\n", k, len(vs))
			for _, v := range vs[:min(len(vs), 5)] {
				fmt.Fprintf(&b, "  - %.1f min, life %d: %s\n", v.at.Sub(s.started).Minutes(), v.life, truncate(strings.ReplaceAll(v.what, "\n", " "), 600))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("Answers by operation (statuses; requests a kill cut off):\n\n| operation | requests | statuses | cut off |\n|---|---|---|---|\n")
	for _, row := range s.rec.opTable() {
		b.WriteString(row + "\n")
	}
	lines, top := s.box.logs["playerd"].summary()
	hours := time.Since(s.started).Hours()
	fmt.Fprintf(&b, "\nplayerd's log: %d lines, %.0f an hour (gokrazy keeps the last 100). Most frequent:\n\n", lines, float64(lines)/hours)
	for _, t := range top[:min(len(top), 15)] {
		fmt.Fprintf(&b, "- %s\n", t)
	}
	return b.Bytes()
}

// du is the bytes and files below dir.
func du(dir string) (bytes int64, files int) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				bytes += info.Size()
				files++
			}
		}
		return nil
	})
	return bytes, files
}

func sortedCountKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedViolationKinds(m map[string][]violation) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Markers of the generated part of docs/reliability.md.
const (
	docsBegin = "<!-- soak figures: begin (written by make soak SOAK=…) -->"
	docsEnd   = "<!-- soak figures: end -->"
)

// writeDocs puts the report between the markers of the docs file and the
// plots beside it (docs/reliability/).
func (s *soak) writeDocs(res results, trends []trend, plots map[string][]byte) error {
	doc, err := os.ReadFile(s.cfg.docs)
	if err != nil {
		return err
	}
	i, j := bytes.Index(doc, []byte(docsBegin)), bytes.Index(doc, []byte(docsEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s has no soak markers (%q … %q)", s.cfg.docs, docsBegin, docsEnd)
	}
	dir := strings.TrimSuffix(s.cfg.docs, filepath.Ext(s.cfg.docs))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, svg := range plots {
		if err := os.WriteFile(filepath.Join(dir, name), svg, 0o644); err != nil {
			return err
		}
	}
	md := s.markdown(res, trends, filepath.Base(dir)+"/")
	var out bytes.Buffer
	out.Write(doc[:i+len(docsBegin)])
	out.WriteString("\n")
	out.Write(md)
	out.Write(doc[j:])
	return os.WriteFile(s.cfg.docs, out.Bytes(), 0o644)
}
