package library

import (
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/storybox/storybox/services/internal/fault"
	"golang.org/x/text/unicode/norm"
)

// Names in the media directory. They are NFC (the form macOS does not use,
// so "Hörspiel" typed on a Mac and on a phone is one name), single path
// elements, visible (a leading dot hides a file from the scan), and short
// enough for every file system the card may be copied to.
const (
	// MaxName is the longest name in bytes, below the 255 of ext4 and FAT.
	MaxName = 200
	// maxRelative bounds a folder's path below the media root.
	maxRelative = 1024
)

// FolderName checks a folder name a parent typed: it is normalised to NFC
// and trimmed, and refused (fault.Invalid) when it is empty, too long,
// hidden, "." or "..", or holds a path separator or a control character.
func FolderName(name string) (string, error) {
	n := strings.TrimSpace(norm.NFC.String(name))
	switch {
	case n == "":
		return "", fault.New(fault.Invalid, "name is empty")
	case !utf8.ValidString(n):
		return "", fault.New(fault.Invalid, "name is not valid UTF-8")
	case len(n) > MaxName:
		return "", fault.New(fault.Invalid, "name is longer than %d bytes", MaxName)
	case strings.HasPrefix(n, "."):
		return "", fault.New(fault.Invalid, "name must not start with a dot")
	case strings.ContainsAny(n, `/\`):
		return "", fault.New(fault.Invalid, "name must not contain / or \\")
	case strings.ContainsFunc(n, unicode.IsControl):
		return "", fault.New(fault.Invalid, "name must not contain control characters")
	}
	return n, nil
}

// FileName makes an uploaded file's name safe instead of refusing it (it
// comes from someone's file system, not from a person typing): the last
// element of any path, NFC, without control characters or leading dots
// and spaces, at most MaxName bytes with its extension kept; "upload" when
// nothing is left.
func FileName(name string) string {
	n := norm.NFC.String(strings.ToValidUTF8(name, ""))
	if i := strings.LastIndexAny(n, `/\`); i >= 0 {
		n = n[i+1:]
	}
	n = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, n)
	n = strings.TrimSpace(strings.TrimLeft(n, ". "))
	if n == "" {
		return "upload"
	}
	if len(n) > MaxName {
		ext := path.Ext(n)
		if len(ext) > 16 {
			ext = ""
		}
		n = truncate(strings.TrimSuffix(n, ext), MaxName-len(ext)) + ext
	}
	return n
}

// truncate cuts s to at most n bytes at a character boundary.
func truncate(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// withSuffix is name with " (k)" before its extension, for a name that is
// taken.
func withSuffix(name string, k int) string {
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	suffix := " (" + strconv.Itoa(k) + ")"
	return truncate(base, MaxName-len(suffix)-len(ext)) + suffix + ext
}
