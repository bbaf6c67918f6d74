package api

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
)

// LibraryAdmin manages the media directory. Changes are scanned at once;
// renames and deletes carry resume points and navigation along.
type LibraryAdmin interface {
	Dirs() ([]library.Dir, error)
	CreateFolder(parentID, name string) (library.Dir, error)
	RenameFolder(id, name string) (library.Dir, error)
	DeleteFolder(id string) error
	// BeginUpload starts an all-or-nothing upload of size bytes (-1:
	// unknown) into the folder id.
	BeginUpload(id string, size int64) (Upload, error)
	SetCover(id string, image io.Reader) (library.Dir, error)
	Limits() library.Limits
}

// Upload is one upload in progress.
type Upload = library.Pending

// multipartSlack is what a multipart body may carry beyond its files:
// boundaries and part headers.
const multipartSlack = 1 << 20

func (h *handler) listFolders(w http.ResponseWriter, r *http.Request) {
	dirs, err := h.LibraryAdmin.Dirs()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, map[string]any{"folders": h.dirModes(dirs)})
}

type folderRequest struct {
	Name   *string `json:"name"`
	Parent string  `json:"parent,omitempty"`
}

func (h *handler) createFolder(w http.ResponseWriter, r *http.Request) {
	var req folderRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Name == nil {
		h.fail(w, r, badRequest("name is required"))
		return
	}
	d, err := h.LibraryAdmin.CreateFolder(req.Parent, *req.Name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusCreated, d)
}

// renameFolder is PATCH /api/admin/library/folders/{id} {"name"}. The
// folder keeps its parent; its id changes with its path.
func (h *handler) renameFolder(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name *string `json:"name"`
	}
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Name == nil {
		h.fail(w, r, badRequest("name is required"))
		return
	}
	d, err := h.LibraryAdmin.RenameFolder(pathVar(r, "id"), *req.Name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, d)
}

func (h *handler) deleteFolder(w http.ResponseWriter, r *http.Request) {
	id := pathVar(r, "id")
	if err := h.LibraryAdmin.DeleteFolder(id); err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, map[string]any{"deleted": true, "id": id})
}

// uploadFiles is POST /api/admin/library/folders/{id}/files: a
// multipart/form-data body whose file parts are stored in the folder, all
// or none. Files stream to disk; nothing of them is held in memory.
func (h *handler) uploadFiles(w http.ResponseWriter, r *http.Request) {
	leave, ok := h.enter(w, r, h.heavy.uploads)
	if !ok {
		return
	}
	defer leave()
	mr, err := multipartBody(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.LibraryAdmin.Limits().Request+multipartSlack)
	keepFlowing(w, r)
	up, err := h.LibraryAdmin.BeginUpload(pathVar(r, "id"), r.ContentLength)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer up.Close()
	n := 0
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			h.fail(w, r, multipartError(err))
			return
		}
		if part.FileName() == "" {
			h.fail(w, r, badRequest("multipart field %q is not a file", part.FormName()))
			return
		}
		if _, err := up.Add(part.FileName(), part); err != nil {
			h.fail(w, r, err)
			return
		}
		n++
	}
	if n == 0 {
		h.fail(w, r, badRequest("no file in the upload"))
		return
	}
	files, err := up.Commit()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusCreated, map[string]any{"files": files})
}

// setCover is PUT /api/admin/library/folders/{id}/cover with the image as
// the body. What it is, is sniffed from the content.
func (h *handler) setCover(w http.ResponseWriter, r *http.Request) {
	leave, ok := h.enter(w, r, h.heavy.uploads)
	if !ok {
		return
	}
	defer leave()
	switch mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt {
	case "image/jpeg", "image/png", "application/octet-stream":
	default:
		h.fail(w, r, fault.New(fault.Unsupported, "Content-Type must be image/jpeg or image/png"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.LibraryAdmin.Limits().Cover+1)
	d, err := h.LibraryAdmin.SetCover(pathVar(r, "id"), r.Body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, d)
}

// multipartBody checks for multipart/form-data (415 otherwise).
func multipartBody(r *http.Request) (*multipart.Reader, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, fault.New(fault.Unsupported, "Content-Type must be multipart/form-data")
	}
	return multipart.NewReader(r.Body, params["boundary"]), nil
}

func multipartError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return fault.New(fault.TooLarge, "the request is larger than %d MB", tooBig.Limit>>20)
	}
	return badRequest("malformed multipart body: %v", err)
}
