package household

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

// conflictRe matches the part Syncthing inserts before a file's extension
// when it keeps a losing version: "name.sync-conflict-YYYYMMDD-HHMMSS-
// DEVICE.ext", DEVICE being the first seven characters of the device id
// of the box whose change was kept under the name (v1.30.0's
// moveForConflict). The format is Syncthing's documented
// naming of conflict files; a conflict of a conflict file carries two.
var conflictRe = regexp.MustCompile(`\.sync-conflict-[0-9]{8}-[0-9]{6}-[0-9A-Z]{7}`)

// ConflictOf reports whether name is a Syncthing conflict file, and the
// name of the file it is a version of.
func ConflictOf(name string) (orig string, ok bool) {
	if !conflictRe.MatchString(name) {
		return "", false
	}
	return conflictRe.ReplaceAllString(name, ""), true
}

// Ignored reports whether a name in a synced folder is not content: a file
// Syncthing is still receiving (".syncthing.NAME.tmp", or
// "~syncthing~NAME.tmp" where dot files are not allowed), its own marker
// and settings (.stfolder, .stignore, .stversions), or a temporary file of
// state.WriteFile a crash left behind. Such a file is never read as an
// entry nor listed as a track.
func Ignored(name string) bool {
	name = filepath.Base(name)
	switch {
	case name == ".stfolder", name == ".stignore", name == ".stversions":
		return true
	case strings.HasPrefix(name, ".syncthing.") && strings.HasSuffix(name, ".tmp"):
		return true
	case strings.HasPrefix(name, "~syncthing~") && strings.HasSuffix(name, ".tmp"):
		return true
	}
	return state.IsTemp(name)
}

// IgnorePatterns are the lines of the shared folder's .stignore, for the
// sync daemon: the temporary files of this box's own atomic writes and
// Syncthing's conflict copies never leave it ("(?d)": Syncthing may delete
// them when it removes a directory). Each box resolves the conflict copies
// it made itself (Reconcile); shared, two boxes' copies of the same name
// would conflict with each other while each box removed its own.
var IgnorePatterns = []string{"(?d).*.tmp-*", "(?d)*.sync-conflict-*"}

// validID accepts the ids that are also safe file names: the cards' (digits
// and capitals) and the stations' and podcasts' (hex digits).
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}
