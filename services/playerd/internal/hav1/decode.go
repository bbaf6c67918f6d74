package hav1

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/storybox/storybox/services/internal/fault"
)

// maxBody is the largest request body accepted; the contract's largest is
// a message of 1000 characters.
const maxBody = 16 << 10

// decode reads one JSON object into dst. Fields it does not know are
// ignored: the contract grows, and a newer client must keep working.
// Wrong types, trailing data and non-objects are invalid_request.
func decode(r *http.Request, dst any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return fault.New(fault.Unsupported, "Content-Type must be application/json")
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return malformed("cannot read the body")
	}
	if len(data) > maxBody {
		return fault.New(fault.TooLarge, "body is larger than %d bytes", maxBody)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return malformed("body must be one JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return malformed("field %q has the wrong type", te.Field)
		}
		return malformed("invalid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return malformed("expected one JSON object")
	}
	return nil
}
