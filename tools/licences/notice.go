package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/google/licenseclassifier/v2/assets"
)

// notice is everything NOTICE.md says.
type notice struct {
	Instance string // the instance directory, as given
	Own      string // storybox's LICENSE
	Programs []string
	Modules  []module
	Groups   []group // the modules' licence texts, each text once
	Go       string  // the Go distribution's LICENSE
	Files    []filesPackage
	// Licence texts the prose refers to, from the classifier's corpus.
	GPL3, LGPL21, Apache2 string
}

// module is one Go module compiled into the image.
type module struct {
	Path, Version string
	Licences      []string
	Group         int // its texts are Groups[Group]
}

// group is the modules that share the same licence texts.
type group struct {
	Modules  []string // "path version"
	Licences []string
	Texts    []text
}

type text struct{ File, Body string }

// filesPackage is a package of gokrazy's that puts files, not programs,
// on the image: the kernel, the boot firmware, the EEPROM.
type filesPackage struct {
	Role, Path, Version string
	Known               knownPackage
	Source              string // the kernel's upstream source
	Patches             []string
	Texts               []text
}

// knownPackage says what a files package is and under which terms; a
// package not listed here fails the generator, so a new kernel or firmware
// is looked at before the notice names it.
type knownPackage struct{ What, Licences string }

var knownPackages = map[string]knownPackage{
	"github.com/gokrazy/kernel.rpi": {
		What:     "the Linux kernel (Raspberry Pi's tree, built by gokrazy), its modules and device trees; cmdline.txt and config.txt",
		Licences: "GPL-2.0 (the kernel, its modules and device trees: LICENSE.linux); BSD-3-Clause (gokrazy's files: LICENSE)",
	},
	"github.com/gokrazy/firmware": {
		What:     "the Raspberry Pi boot firmware (bootcode.bin, start*.elf, fixup*.dat)",
		Licences: "Broadcom's and Raspberry Pi's binary redistribution licence (LICENSE.broadcom): unmodified, for Raspberry Pi devices only; BSD-3-Clause (gokrazy's files: LICENSE)",
	},
	"github.com/gokrazy/rpi-eeprom": {
		What:     "the Raspberry Pi 4 and 5 bootloader EEPROM images",
		Licences: "Raspberry Pi's binary redistribution licence (LICENSE.eeprom): unmodified, for Raspberry Pi devices only; BSD-3-Clause (gokrazy's files: LICENSE)",
	},
}

//go:embed notice.md.tmpl
var noticeTemplate string

// collect finds every component of in's image and its licence texts.
// ourModule is skipped: LICENSE covers it.
func collect(in *instance, lc *licenceClassifier, own, ourModule string) (*notice, error) {
	n := &notice{Instance: "gokrazy-instance/" + filepath.Base(in.dir), Own: own, Programs: in.programs()}
	pkgs, err := in.deps()
	if err != nil {
		return nil, err
	}
	// Each package's licence is the nearest licence file above it within
	// its module, as go-licenses finds it; a module usually has one, at
	// its root, but a vendored package can bring its own.
	dirs := map[string][]string{} // module "path version" -> licence dirs
	mods := map[string]*goModule{}
	var problems []string
	for _, p := range pkgs {
		if p.Standard || p.Module == nil || p.Module.Main || p.Module.Path == ourModule {
			continue
		}
		m := p.Module
		if m.Replace != nil {
			m = m.Replace
		}
		if m.Dir == "" || m.Version == "" {
			problems = append(problems, fmt.Sprintf("%s: module %s has no version or is not in the module cache (a local replace has no licence to tell)", p.ImportPath, m.Path))
			continue
		}
		key := m.Path + " " + m.Version
		mods[key] = m
		d, err := nearestLicenceDir(p.Dir, m.Dir)
		if err != nil {
			return nil, err
		}
		if d == "" {
			problems = append(problems, fmt.Sprintf("%s (%s): no licence file", p.ImportPath, key))
			continue
		}
		if !slices.Contains(dirs[key], d) {
			dirs[key] = append(dirs[key], d)
		}
	}
	keys := make([]string, 0, len(mods))
	for k := range mods {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	byTexts := map[string]int{}
	for _, key := range keys {
		m := mods[key]
		ds := dirs[key]
		slices.Sort(ds)
		texts, names, err := licencesIn(lc, m.Dir, ds)
		if err != nil {
			return nil, err
		}
		if err := checkAllowed(names); err != nil && len(ds) > 0 {
			problems = append(problems, fmt.Sprintf("%s: %v", key, err))
		}
		var sig strings.Builder
		for _, t := range texts {
			sig.WriteString(t.File + "\x00" + t.Body + "\x00")
		}
		g, ok := byTexts[sig.String()]
		if !ok {
			g = len(n.Groups)
			byTexts[sig.String()] = g
			n.Groups = append(n.Groups, group{Licences: names, Texts: texts})
		}
		n.Groups[g].Modules = append(n.Groups[g].Modules, key)
		n.Modules = append(n.Modules, module{Path: m.Path, Version: m.Version, Licences: names, Group: g})
	}
	if problems != nil {
		return nil, fmt.Errorf("the image's Go modules:\n\t%s", strings.Join(problems, "\n\t"))
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "LICENSE"))
	if err != nil {
		return nil, err
	}
	n.Go = string(b)
	for _, t := range []struct {
		dst  *string
		file string
	}{{&n.GPL3, "License/GPL-3.0/license.txt"}, {&n.LGPL21, "License/LGPL-2.1/pristine.txt"}, {&n.Apache2, "License/Apache-2.0/pristine.txt"}} {
		b, err := assets.ReadLicenseFile(t.file)
		if err != nil {
			return nil, fmt.Errorf("licence text %s: %w", t.file, err)
		}
		*t.dst = string(b)
	}
	for _, f := range []struct{ role, pkg string }{{"kernel", in.KernelPackage}, {"firmware", in.FirmwarePackage}, {"EEPROM", in.EEPROMPackage}} {
		if f.pkg == "" {
			continue
		}
		fp, err := filesPackageOf(in, f.role, f.pkg)
		if err != nil {
			return nil, err
		}
		n.Files = append(n.Files, *fp)
	}
	return n, nil
}

// licencesIn reads the licence and NOTICE files of dirs, within the
// module at root, and names the licences they hold.
func licencesIn(lc *licenceClassifier, root string, dirs []string) (texts []text, names []string, err error) {
	for _, d := range dirs {
		for _, kind := range []struct {
			re       *regexp.Regexp
			classify bool
		}{{licenceFile, true}, {noticeFile, false}} {
			files, err := licenceFiles(d, kind.re)
			if err != nil {
				return nil, nil, err
			}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(d, f))
				if err != nil {
					return nil, nil, err
				}
				rel, _ := filepath.Rel(root, filepath.Join(d, f))
				texts = append(texts, text{filepath.ToSlash(rel), string(b)})
				if kind.classify {
					for _, n := range lc.names(b) {
						if !slices.Contains(names, n) {
							names = append(names, n)
						}
					}
				}
			}
		}
	}
	slices.Sort(names)
	return texts, names, nil
}

func filesPackageOf(in *instance, role, pkg string) (*filesPackage, error) {
	k, ok := knownPackages[pkg]
	if !ok {
		return nil, fmt.Errorf("%s package %s: not known to tools/licences (add what it ships and its terms to knownPackages)", role, pkg)
	}
	m, err := in.download(pkg)
	if err != nil {
		return nil, err
	}
	fp := &filesPackage{Role: role, Path: m.Path, Version: m.Version, Known: k}
	files, err := licenceFiles(m.Dir, licenceFile)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s %s: no licence file", m.Path, m.Version)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(m.Dir, f))
		if err != nil {
			return nil, err
		}
		fp.Texts = append(fp.Texts, text{f, string(b)})
	}
	// gokrazy builds its kernels from an upstream archive, its patches
	// and a configuration addendum, all in the module (_build).
	if b, err := os.ReadFile(filepath.Join(m.Dir, "_build", "upstream-url.txt")); err == nil {
		fp.Source = strings.TrimSpace(string(b))
		if s, err := os.ReadFile(filepath.Join(m.Dir, "_build", "series")); err == nil {
			fp.Patches = strings.Fields(string(s))
		}
	}
	return fp, nil
}

func (n *notice) render() ([]byte, error) {
	t, err := template.New("notice").Funcs(template.FuncMap{
		"join":  strings.Join,
		"fence": fence,
	}).Parse(noticeTemplate)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, n); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// fence quotes a licence text verbatim in Markdown: in a fence longer than
// any run of backquotes in it.
func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + "text\n" + strings.TrimRight(s, "\n") + "\n" + f
}
