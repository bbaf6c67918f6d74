// Package storybox holds what the repository's root says about the whole
// project that its programs serve: NOTICE.md, storybox's licence and every
// third-party component of the image with its licence (written by
// tools/licences), which playerd serves at /api/licenses.
package storybox

import _ "embed"

// Notice is NOTICE.md as it was when the program was built.
//
//go:embed NOTICE.md
var Notice string
