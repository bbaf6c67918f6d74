package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/licenseclassifier/v2/assets"
)

var (
	classifierOnce sync.Once
	testClassifier *licenceClassifier
	classifierErr  error
)

func classify(t *testing.T) *licenceClassifier {
	t.Helper()
	classifierOnce.Do(func() { testClassifier, classifierErr = newClassifier() })
	if classifierErr != nil {
		t.Fatal(classifierErr)
	}
	return testClassifier
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func corpus(t *testing.T, name string) string {
	t.Helper()
	b, err := assets.ReadLicenseFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A module's licence decides whether the check passes: one on the allow
// list passes, a copyleft one, a text the classifier does not know and a
// module without any licence file fail.
func TestModuleLicences(t *testing.T) {
	lc := classify(t)
	own, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file, body string
		want             string // the licence named, "" for none
		ok               bool
	}{
		{"ours", "LICENSE", string(own), "BSD-3-Clause", true},
		{"apache with a notice", "LICENSE.txt", corpus(t, "License/Apache-2.0/pristine.txt"), "Apache-2.0", true},
		{"gpl", "COPYING", corpus(t, "License/GPL-3.0/license.txt"), "GPL-3.0", false},
		{"unknown terms", "LICENSE", "You may use this program on Tuesdays only.\n", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mod := t.TempDir()
			write(t, filepath.Join(mod, c.file), c.body)
			write(t, filepath.Join(mod, "NOTICE"), "Notices that travel with the code.\n")
			write(t, filepath.Join(mod, "sub", "pkg.go"), "package sub\n")
			dir, err := nearestLicenceDir(filepath.Join(mod, "sub"), mod)
			if err != nil || dir != mod {
				t.Fatalf("licence dir %q, %v; want the module root", dir, err)
			}
			texts, names, err := licencesIn(lc, mod, []string{dir})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(names, ","); got != c.want {
				t.Errorf("licences %q, want %q", got, c.want)
			}
			if len(texts) != 2 || texts[0].File != c.file || texts[0].Body != c.body || texts[1].File != "NOTICE" {
				t.Errorf("texts %+v: want the licence verbatim, then the NOTICE", texts)
			}
			if err := checkAllowed(names); (err == nil) != c.ok {
				t.Errorf("checkAllowed(%v) = %v, want ok %v", names, err, c.ok)
			}
		})
	}
	t.Run("no licence file", func(t *testing.T) {
		mod := t.TempDir()
		write(t, filepath.Join(mod, "sub", "pkg.go"), "package sub\n")
		write(t, filepath.Join(filepath.Dir(mod), "LICENSE"), string(own)) // above the module: not its licence
		if dir, err := nearestLicenceDir(filepath.Join(mod, "sub"), mod); err != nil || dir != "" {
			t.Errorf("licence dir %q, %v; want none", dir, err)
		}
	})
}

// A vendored package's own licence is the one nearest to it.
func TestNearestLicenceDir(t *testing.T) {
	mod := t.TempDir()
	write(t, filepath.Join(mod, "LICENSE"), "x")
	write(t, filepath.Join(mod, "third_party", "lib", "COPYING.md"), "y")
	write(t, filepath.Join(mod, "third_party", "lib", "inner", "a.go"), "package inner\n")
	if d, err := nearestLicenceDir(filepath.Join(mod, "third_party", "lib", "inner"), mod); err != nil || d != filepath.Join(mod, "third_party", "lib") {
		t.Errorf("got %q, %v", d, err)
	}
}

// The check compares the whole notice: a changed line anywhere is out of
// date, and says where.
func TestFirstDifference(t *testing.T) {
	a := []byte("one\ntwo\nthree\n")
	if _, ok := firstDifference(a, a); !ok {
		t.Error("equal texts differ")
	}
	if line, ok := firstDifference(a, []byte("one\nTWO\nthree\n")); ok || line != 2 {
		t.Errorf("changed line: %d %v", line, ok)
	}
	if line, ok := firstDifference(a, []byte("one\ntwo\nthree\nfour\n")); ok || line != 4 {
		t.Errorf("added line: %d %v", line, ok)
	}
}

// The repository's NOTICE.md is what the generator writes for the image
// as it is configured now, and a notice changed by hand fails the check.
// It runs go list for the image's programs and reads the kernel and
// firmware modules (fetched once into the module cache).
func TestNoticeUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the image's packages")
	}
	root := "../.."
	inst := filepath.Join(root, "gokrazy-instance", "storybox")
	licence := filepath.Join(root, "LICENSE")
	if err := run(inst, licence, filepath.Join(root, "NOTICE.md"), true); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(root, "NOTICE.md"))
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(t.TempDir(), "NOTICE.md")
	write(t, stale, strings.Replace(string(old), "| golang.org/x/text |", "| golang.org/x/text-old |", 1))
	err = run(inst, licence, stale, true)
	if err == nil || !strings.Contains(err.Error(), "out of date") {
		t.Fatalf("a changed notice: %v", err)
	}
}

// A module in the image under a licence off the allow list, or under
// terms the classifier does not know, fails the generator, named with its
// version. The modules come from a module proxy in a directory, as the Go
// command fetches any.
func TestCollectRefusesModules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	for _, m := range []struct{ path, file, licence string }{
		{"example.com/copyleft", "COPYING", corpus(t, "License/GPL-3.0/license.txt")},
		{"example.com/tuesdays", "LICENSE", "You may use this program on Tuesdays only.\n"},
		{"example.com/fine", "LICENSE", corpus(t, "License/ISC/pristine.txt")},
	} {
		name := filepath.Base(m.path)
		dir := filepath.Join(proxy, m.path, "@v")
		mod := "module " + m.path + "\n\ngo 1.21\n"
		write(t, filepath.Join(dir, "list"), "v1.0.0\n")
		write(t, filepath.Join(dir, "v1.0.0.info"), `{"Version":"v1.0.0"}`)
		write(t, filepath.Join(dir, "v1.0.0.mod"), mod)
		writeZip(t, filepath.Join(dir, "v1.0.0.zip"), m.path+"@v1.0.0/", map[string]string{
			"go.mod": mod, name + ".go": "package " + name + "\n\nconst X = 1\n", m.file: m.licence,
		})
	}
	inst := filepath.Join(tmp, "instance")
	write(t, filepath.Join(inst, "config.json"), `{"Packages": ["example.com/app"], "GokrazyPackages": [], "InitPkg": "example.com/app",
		"Environment": ["GOOS=linux", "GOARCH=arm64"]}`)
	app := filepath.Join(inst, "builddir", "example.com", "app")
	write(t, filepath.Join(app, "go.mod"), "module example.com/app\n\ngo 1.21\n\nrequire (\n\texample.com/copyleft v1.0.0\n\texample.com/tuesdays v1.0.0\n\texample.com/fine v1.0.0\n)\n")
	write(t, filepath.Join(app, "main.go"), "package main\n\nimport (\n\t_ \"example.com/copyleft\"\n\t_ \"example.com/fine\"\n\t_ \"example.com/tuesdays\"\n)\n\nfunc main() {}\n")
	t.Setenv("GOPROXY", "file://"+filepath.ToSlash(proxy))
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOFLAGS", "-mod=mod -modcacherw")
	t.Setenv("GOMODCACHE", filepath.Join(tmp, "modcache"))
	in, err := readInstance(inst)
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect(in, classify(t), "", "github.com/storybox/storybox")
	if err == nil {
		t.Fatal("a GPL module and one of unknown terms passed")
	}
	for _, want := range []string{"example.com/copyleft v1.0.0: licence GPL-3.0 is not on the allow list", "example.com/tuesdays v1.0.0: no known licence"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "example.com/fine") {
		t.Errorf("the ISC module was refused: %v", err)
	}
}

func writeZip(t *testing.T, path, prefix string, files map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for name, body := range files {
		w, err := z.Create(prefix + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
