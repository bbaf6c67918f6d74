package api

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/playerd/internal/backup"
)

// BackupAdmin writes and restores the configuration (package backup).
type BackupAdmin interface {
	// Backup streams the archive, with the media when media is set.
	Backup(w io.Writer, media bool) error
	// Restore checks an archive whole, then replaces and applies it.
	Restore(r io.Reader) (backup.Result, error)
	Limits() backup.Limits
}

// backup is GET /api/admin/backup[?include_media=true]: a ZIP, streamed.
func (h *handler) backup(w http.ResponseWriter, r *http.Request) {
	leave, ok := h.enter(w, r, h.heavy.backups)
	if !ok {
		return
	}
	defer leave()
	media := false
	if v := r.URL.Query().Get("include_media"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			h.fail(w, r, badRequest("include_media must be true or false"))
			return
		}
		media = b
	}
	name := "storybox-backup-" + time.Now().UTC().Format("20060102-150405") + ".zip"
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	out := newFlowing(w)
	if err := h.Backup.Backup(out, media); err != nil {
		if out.written == 0 {
			w.Header().Del("Content-Disposition")
			h.fail(w, r, err)
			return
		}
		// The status is sent: cut the connection, so the client has a
		// truncated archive (no central directory) and not a valid-looking
		// incomplete one.
		if h.log != nil {
			h.log.Error("backup failed while streaming", "error", err)
		}
		panic(http.ErrAbortHandler)
	}
}

// restore is POST /api/admin/restore: a multipart/form-data body whose
// first file part is the archive.
func (h *handler) restore(w http.ResponseWriter, r *http.Request) {
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
	r.Body = http.MaxBytesReader(w, r.Body, h.Backup.Limits().Archive+multipartSlack)
	keepFlowing(w, r)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			h.fail(w, r, badRequest("no file in the upload"))
			return
		}
		if err != nil {
			h.fail(w, r, multipartError(err))
			return
		}
		if part.FileName() == "" {
			continue // a form field beside the file
		}
		res, err := h.Backup.Restore(part)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		answer.JSON(w, http.StatusOK, res)
		return
	}
}
