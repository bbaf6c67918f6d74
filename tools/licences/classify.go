package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	classifier "github.com/google/licenseclassifier/v2"
	"github.com/google/licenseclassifier/v2/assets"
)

// allowed are the licences a Go module compiled into the image may have,
// by the classifier's names: permissive ones (LicenseRef-uthash is the
// one-clause BSD licence; the Unlicense a public-domain dedication), and
// MPL-2.0, whose conditions apply file by file to its unmodified source.
// Anything else (GPL among them: our programs are BSD-licensed) needs a
// decision, so it fails the check.
var allowed = []string{"Apache-2.0", "BSD-1-Clause", "BSD-2-Clause", "BSD-3-Clause", "ISC", "LicenseRef-uthash", "MIT", "MPL-2.0", "Unlicense"}

// licenceFile matches the names licence files go by: LICENSE, LICENCE,
// UNLICENSE, COPYING, with an extension or a suffix (LICENSE-MIT,
// LICENSE.md).
var licenceFile = regexp.MustCompile(`(?i)^(licen[cs]e|unlicen[cs]e|copying)([-._][^/]*)?$`)

// noticeFile is Apache-2.0's NOTICE, which a redistribution passes on.
var noticeFile = regexp.MustCompile(`(?i)^notice([-._][^/]*)?$`)

// licenceFiles are the licence files in dir, sorted by name.
func licenceFiles(dir string, re *regexp.Regexp) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && re.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// classifier names the licences in a text.
type licenceClassifier struct{ c *classifier.Classifier }

func newClassifier() (*licenceClassifier, error) {
	c, err := assets.DefaultClassifier()
	if err != nil {
		return nil, fmt.Errorf("licence classifier: %w", err)
	}
	return &licenceClassifier{c}, nil
}

// minConfidence is how closely a text must match a known licence to be
// taken as it: a licence with its copyright line and a reflowed paragraph
// matches at 0.95 and above; a text that changes terms does not.
const minConfidence = 0.9

// names are the licences found in text, sorted; none when it is not a
// licence the classifier knows. A licence's own standard notice (the
// classifier's "Header", e.g. Apache-2.0's "Licensed under the Apache
// License, Version 2.0 …" that a module ships as its LICENSE, as
// go-nat-pmp in Syncthing does) names the licence as its full text does;
// the full text is in the notice either way.
func (lc *licenceClassifier) names(text []byte) []string {
	var names []string
	for _, m := range lc.c.Match(text).Matches {
		if (m.MatchType == "License" || m.MatchType == "Header") && m.Confidence >= minConfidence && !slices.Contains(names, m.Name) {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return names
}

// checkAllowed says which of names are not on the allow list, or that
// there are none.
func checkAllowed(names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("no known licence")
	}
	var bad []string
	for _, n := range names {
		if !slices.Contains(allowed, n) {
			bad = append(bad, n)
		}
	}
	if bad != nil {
		return fmt.Errorf("licence %s is not on the allow list (%s)", strings.Join(bad, ", "), strings.Join(allowed, ", "))
	}
	return nil
}

// nearestLicenceDir is the directory between dir and root (both included)
// closest to dir that holds a licence file; "" when none does.
func nearestLicenceDir(dir, root string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		names, err := licenceFiles(d, licenceFile)
		if err != nil {
			return "", err
		}
		if len(names) > 0 {
			return d, nil
		}
		if d == root || !strings.HasPrefix(d, root+string(filepath.Separator)) {
			return "", nil
		}
	}
}
