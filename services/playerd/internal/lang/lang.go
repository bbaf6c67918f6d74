// Package lang is the box's one decision of its language. The settings
// take any well-formed language tag ("de", "en-GB", "pt_BR", "gsw"); the
// box has words in German and English only. Of maps a tag to the one
// language the screen, the home categories, the admin page and the box's
// own announcements use, and to the voice those announcements are spoken
// with, so that no part decides on its own.
package lang

import (
	"strings"

	"golang.org/x/text/language"
)

// Lang is a language the box has words in.
type Lang string

const (
	German  Lang = "de"
	English Lang = "en"
)

// Default is the language of an empty tag: the settings' default.
const Default = German

// Fallback is the language of a tag the box has no words for (French,
// Dutch, a malformed tag): English, the box's second language and the one
// a parent who reads neither is likelier to read.
const Fallback = English

// All are the languages the box has words in, German first: the order
// Pick falls back in.
func All() []Lang { return []Lang{German, English} }

var matcher = language.NewMatcher([]language.Tag{language.German, language.English})

// Decision is the box's language for one settings tag.
type Decision struct {
	// UI is the language of every word the box shows or says of its own.
	UI Lang
	// Voice is the tag the box's announcements are spoken with when the
	// settings name no voice language: the tag's language and region when
	// the tag is a variety of UI ("en-GB" keeps its accent), UI otherwise
	// (a French box's English words are not read by a French voice).
	Voice string
}

// Of decides the language for the settings' tag. Varieties and close
// relatives match (de-AT, de-CH, gsw and deu are German; en-GB, en_US
// and eng are English, in any case); every other tag gets Fallback.
func Of(tag string) Decision {
	tag = strings.TrimSpace(tag)
	if tag == "" {
		return Decision{UI: Default, Voice: string(Default)}
	}
	t, err := language.Parse(strings.ReplaceAll(tag, "_", "-"))
	if err != nil {
		return Decision{UI: Fallback, Voice: string(Fallback)}
	}
	_, i, conf := matcher.Match(t)
	if conf < language.High {
		return Decision{UI: Fallback, Voice: string(Fallback)}
	}
	ui := All()[i]
	d := Decision{UI: ui, Voice: string(ui)}
	if base, _ := t.Base(); base.String() == string(ui) {
		// The region only, if the tag names one: a voice has no script
		// or variant to choose.
		if r, conf := t.Region(); conf == language.Exact {
			d.Voice += "-" + r.String()
		}
	}
	return d
}

// Pick is the text of texts (keyed by language code) in l, else in the
// other languages of All, else any; "" when texts is empty.
func (l Lang) Pick(texts map[string]string) string {
	if s := texts[string(l)]; s != "" {
		return s
	}
	for _, o := range All() {
		if s := texts[string(o)]; s != "" {
			return s
		}
	}
	// Maps have no order: the smallest key, so the screen does not flicker.
	first := ""
	for k, s := range texts {
		if s != "" && (first == "" || k < first) {
			first = k
		}
	}
	return texts[first]
}
