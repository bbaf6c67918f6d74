package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strconv"
)

// chart is a line chart: lines over minutes of the run, vertical marks at
// the kills, and an optional dashed bound.
type chart struct {
	title, yLabel string
	lines         []line
	marks         []float64 // x of the kills
	bound         *float64
}

type line struct {
	name   string
	colour string
	pts    [][2]float64 // x in minutes; NaN y breaks the line (a kill)
}

const (
	chartW, chartH         = 760, 300
	padL, padR, padT, padB = 70, 20, 36, 44
)

// svg draws the chart as a standalone SVG document.
func (c chart) svg() []byte {
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), 0.0, math.Inf(-1)
	for _, l := range c.lines {
		for _, p := range l.pts {
			if math.IsNaN(p[1]) {
				continue
			}
			xmin, xmax = min(xmin, p[0]), max(xmax, p[0])
			ymin, ymax = min(ymin, p[1]), max(ymax, p[1])
		}
	}
	if c.bound != nil {
		ymax = max(ymax, *c.bound)
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax, ymax = 0, 1, 1
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	ystep := niceStep((ymax - ymin) / 5)
	if ystep == 0 {
		ystep = 1
	}
	ymin = math.Floor(ymin/ystep) * ystep
	ymax = math.Ceil(ymax*1.05/ystep) * ystep
	if ymax == ymin {
		ymax = ymin + ystep
	}
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	x := func(v float64) float64 { return padL + (v-xmin)/(xmax-xmin)*pw }
	y := func(v float64) float64 { return padT + ph - (v-ymin)/(ymax-ymin)*ph }

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", padL, html.EscapeString(c.title))
	// Grid and y axis.
	for v := ymin; v <= ymax+ystep/2; v += ystep {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", padL, chartW-padR, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", padL-6, y(v), trimNum(v))
	}
	fmt.Fprintf(&b, `<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">%s</text>`+"\n", padT+int(ph/2), padT+int(ph/2), html.EscapeString(c.yLabel))
	// x axis in minutes.
	xstep := niceStep((xmax - xmin) / 8)
	for v := math.Ceil(xmin/xstep) * xstep; v <= xmax; v += xstep {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#999"/>`+"\n", x(v), x(v), y(ymin), y(ymin)+4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(v), y(ymin)+17, trimNum(v))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">minutes into the run</text>`+"\n", padL+pw/2, chartH-6)
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", padL, chartW-padR, y(ymin), y(ymin))
	for _, m := range c.marks {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#c33" stroke-width="0.8" stroke-dasharray="2,3"/>`+"\n", x(m), x(m), padT, y(ymin))
	}
	if c.bound != nil {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#c33" stroke-dasharray="6,4"/>`+"\n", padL, chartW-padR, y(*c.bound), y(*c.bound))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="#c33">bound %s</text>`+"\n", chartW-padR-4, y(*c.bound)-4, trimNum(*c.bound))
	}
	for i, l := range c.lines {
		var d bytes.Buffer
		pen := false
		for _, p := range l.pts {
			if math.IsNaN(p[1]) {
				pen = false
				continue
			}
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f,%.1f ", cmd, x(p[0]), y(p[1]))
			pen = true
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.2"/>`+"\n", d.String(), l.colour)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="3" fill="%s"/><text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n",
			padL+10+i*170, padT+4, l.colour, padL+26+i*170, padT+6, html.EscapeString(l.name))
	}
	if len(c.marks) > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#c33" text-anchor="end">dotted: SIGKILL and restart</text>`+"\n", chartW-padR, padT-8)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// niceStep is 1, 2 or 5 times a power of ten near raw.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func trimNum(v float64) string {
	if math.Abs(v-math.Round(v)) < 1e-9 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}
