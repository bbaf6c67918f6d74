package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// instance is what a gokrazy instance's config.json says about what goes
// into its image.
type instance struct {
	Packages        []string
	GokrazyPackages []string
	Environment     []string
	KernelPackage   string
	FirmwarePackage string
	EEPROMPackage   string
	InitPkg         string
	PackageConfig   map[string]struct {
		ExtraFilePaths map[string]string
		// GoBuildTags select files as they do when gok builds the
		// package (Syncthing's noassets).
		GoBuildTags []string
	}
	dir string // the instance's directory
}

func readInstance(dir string) (*instance, error) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	var in instance
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	in.dir = dir
	return &in, nil
}

// programs are the Go packages gok builds into the image: ours, gokrazy's
// own (its defaults when the config names none, as gok does) and the init
// gok generates, which imports github.com/gokrazy/gokrazy.
func (in *instance) programs() []string {
	p := slices.Clone(in.Packages)
	g := in.GokrazyPackages
	if g == nil {
		g = []string{"github.com/gokrazy/gokrazy/cmd/dhcp", "github.com/gokrazy/gokrazy/cmd/ntp", "github.com/gokrazy/gokrazy/cmd/randomd"}
	}
	p = append(p, g...)
	if in.InitPkg != "" {
		return append(p, in.InitPkg)
	}
	return append(p, "github.com/gokrazy/gokrazy")
}

// buildDir is the directory gok builds pkg in: the most specific
// builddir/<path> with a go.mod, as gok looks for it.
func (in *instance) buildDir(pkg string) (string, error) {
	parts := strings.Split(pkg, "/")
	for i := len(parts); i > 0; i-- {
		d := filepath.Join(append([]string{in.dir, "builddir"}, parts[:i]...)...)
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("%s: no go.mod under %s/builddir", pkg, in.dir)
}

// env is the build environment of the image's programs.
func (in *instance) env() []string {
	env := append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	return append(env, in.Environment...)
}

// goPackage is what `go list -deps -json` tells of one package.
type goPackage struct {
	ImportPath string
	Dir        string
	Standard   bool
	Module     *goModule
}

type goModule struct {
	Path    string
	Version string
	Dir     string
	Main    bool
	Replace *goModule
}

// deps lists every package the image's Go programs are built from, as gok
// builds them: each in its build directory, for the image's GOOS/GOARCH.
func (in *instance) deps() ([]goPackage, error) {
	// Programs are listed together when they share a build directory and
	// build tags.
	type build struct{ dir, tags string }
	byBuild := map[build][]string{}
	var builds []build
	for _, p := range in.programs() {
		d, err := in.buildDir(p)
		if err != nil {
			return nil, err
		}
		b := build{d, strings.Join(in.PackageConfig[p].GoBuildTags, ",")}
		if byBuild[b] == nil {
			builds = append(builds, b)
		}
		byBuild[b] = append(byBuild[b], p)
	}
	var all []goPackage
	for _, b := range builds {
		args := []string{"list", "-deps", "-json=ImportPath,Dir,Standard,Module"}
		if b.tags != "" {
			args = append(args, "-tags="+b.tags)
		}
		cmd := exec.Command("go", append(args, byBuild[b]...)...)
		cmd.Dir, cmd.Env = b.dir, in.env()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go list in %s: %w: %s", b.dir, err, stderr.Bytes())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p goPackage
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("go list in %s: %w", b.dir, err)
			}
			all = append(all, p)
		}
	}
	return all, nil
}

// download fetches the module that provides pkg in pkg's build directory
// (the kernel and firmware packages, which hold files, not programs) and
// returns where it is.
func (in *instance) download(pkg string) (*goModule, error) {
	d, err := in.buildDir(pkg)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-m", "-json", pkg)
	cmd.Dir, cmd.Env = d, in.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m %s in %s: %w: %s", pkg, d, err, stderr.Bytes())
	}
	var m goModule
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, err
	}
	if m.Dir == "" {
		cmd := exec.Command("go", "mod", "download", "-json", pkg+"@"+m.Version)
		cmd.Dir, cmd.Env = d, in.env()
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go mod download %s: %w: %s", pkg, err, stderr.Bytes())
		}
		if err := json.Unmarshal(out, &m); err != nil {
			return nil, err
		}
	}
	return &m, nil
}
