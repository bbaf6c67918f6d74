package adminui

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// TestEveryErrorCodeHasWords: the page says every error the box can answer
// in its own words, German and English, by the error body's code (the
// message is English): every kind, the router's 405, every parental
// refusal, and every code a package gives its errors (.Coded in the
// source). A new code without words fails here.
func TestEveryErrorCodeHasWords(t *testing.T) {
	src, err := fs.ReadFile(files, "static/js/i18n.js")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	de, en, end := strings.Index(s, "const de = {"), strings.Index(s, "const en = {"), strings.Index(s, "const dicts")
	if de < 0 || en < de || end < en {
		t.Fatal("i18n.js: the dictionaries are not where this test looks")
	}
	want := map[string]bool{"kind.method_not_allowed": true}
	for _, k := range fault.Kinds() {
		want["kind."+fault.KindCode(k)] = true
	}
	for _, r := range []string{rules.ReasonBedtime, rules.ReasonDailyLimit, rules.ReasonLocked} {
		want["code.refused_"+r] = true
	}
	for _, c := range codedInSource(t) {
		want["code."+c] = true
	}
	if len(want) < 25 {
		t.Fatalf("found only %d codes: the search of the source is broken", len(want))
	}
	for key := range want {
		for name, dict := range map[string]string{"German": s[de:en], "English": s[en:end]} {
			if !strings.Contains(dict, "'"+key+"': ") {
				t.Errorf("error code %s has no %s words in i18n.js", key, name)
			}
		}
	}
}

// codedInSource are the codes given with .Coded("…") in the services'
// Go source (tests left out).
func codedInSource(t *testing.T) []string {
	t.Helper()
	root, err := filepath.Abs("../../..") // services/
	if err != nil {
		t.Fatal(err)
	}
	coded := regexp.MustCompile(`\.Coded\("([a-z_]+)"\)`)
	var out []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range coded.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
