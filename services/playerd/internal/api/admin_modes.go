package api

import (
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// FolderModes are the play modes a parent sets per folder (player.Mode).
type FolderModes interface {
	// FolderModes is every folder's mode that is not normal, by id.
	FolderModes() map[string]player.Mode
	// SetFolderMode saves a folder's mode (fault.Invalid for an unknown
	// mode, fault.NotFound for an unknown folder).
	SetFolderMode(id string, mode player.Mode) error
}

// setFolderMode is PUT /api/admin/library/folders/{id}/mode {"mode"}.
func (h *handler) setFolderMode(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Mode *player.Mode `json:"mode"`
	}
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Mode == nil {
		h.fail(w, r, badRequest("mode is required (one of %v)", player.Modes))
		return
	}
	id := pathVar(r, "id")
	if err := h.FolderModes.SetFolderMode(id, *req.Mode); err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, map[string]any{"id": id, "mode": *req.Mode})
}

// libraryFolder is a folder of GET /api/library with the mode it starts in.
type libraryFolder struct {
	library.Folder
	Mode player.Mode `json:"mode"`
}

// withModes gives each folder its mode.
func (h *handler) withModes(folders []library.Folder) []libraryFolder {
	var modes map[string]player.Mode
	if h.FolderModes != nil {
		modes = h.FolderModes.FolderModes()
	}
	out := make([]libraryFolder, len(folders))
	for i, f := range folders {
		out[i] = libraryFolder{Folder: f, Mode: player.ModeNormal}
		if m, ok := modes[f.ID]; ok {
			out[i].Mode = m
		}
	}
	return out
}

// adminDir is a directory of GET /api/admin/library/folders with the mode
// its folder starts in, for the admin page's choice.
type adminDir struct {
	library.Dir
	Mode player.Mode `json:"mode"`
}

func (h *handler) dirModes(dirs []library.Dir) []adminDir {
	var modes map[string]player.Mode
	if h.FolderModes != nil {
		modes = h.FolderModes.FolderModes()
	}
	out := make([]adminDir, len(dirs))
	for i, d := range dirs {
		out[i] = adminDir{Dir: d, Mode: player.ModeNormal}
		if m, ok := modes[d.ID]; ok {
			out[i].Mode = m
		}
	}
	return out
}
