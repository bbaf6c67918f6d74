// Package langtest holds the language tags tests try: one of each kind the
// settings accept, so that every part of the box is tried with the same.
package langtest

// Tags are settings' language tags, one of each kind the settings accept
// (settings.Validate); lang.Of decides each.
var Tags = []string{
	"de", "en", // the box's languages
	"de-DE", "de-AT", "de-CH", "en-GB", "en-US", // varieties
	"en_GB", "EN-gb", "de_at", // other spellings of them
	"deu", "eng", "gsw", // three-letter codes and a close relative (Swiss German)
	"de-Latn-DE", "en-GB-oxendict", // script and variant subtags
	"fr", "pt_BR", "nl-BE", "zh-Hant", // languages the box has no words in
	"xx", "qq-ZZ", // well formed, but no language
}
