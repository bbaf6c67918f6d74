package answer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/storybox/storybox/services/internal/fault"
)

// DefaultLimit bounds a body when Body.Limit is not set.
const DefaultLimit = 64 << 10

// Body are a surface's rules for JSON request bodies: one JSON object, of
// the media type application/json (else 415), at most Limit bytes (else
// 413); wrong types, trailing data and anything but an object are
// malformed (400, ErrMalformed).
type Body struct {
	// Limit is the largest body accepted, in bytes; 0: DefaultLimit.
	Limit int64
	// Lenient ignores fields the target does not know, for a contract
	// that grows (a newer client must keep working); otherwise an unknown
	// field is refused, so a typo is not silently dropped.
	Lenient bool
}

// ErrMalformed is in the chain of every body the decoder refuses as
// malformed, and of Malformed's errors: a surface whose contract tells a
// malformed request from a value out of range finds it with errors.Is.
var ErrMalformed = errors.New("malformed request")

// marked is an error of a kind that carries a mark for errors.Is without
// adding the mark's text to the message a client reads.
type marked struct {
	msg  string
	kind fault.Kind
	mark error
}

func (e *marked) Error() string   { return e.msg }
func (e *marked) Unwrap() []error { return []error{e.kind, e.mark} }

// Malformed is an Invalid error for a request that is not what the
// contract asks (a missing field), as opposed to a value out of range.
func Malformed(format string, a ...any) error {
	return &marked{msg: fmt.Sprintf(format, a...), kind: fault.Invalid, mark: ErrMalformed}
}

// Limit is the largest body b accepts.
func (b Body) limit() int64 {
	if b.Limit > 0 {
		return b.Limit
	}
	return DefaultLimit
}

// Decode reads exactly one JSON object from r's body into dst. Its errors
// are of the kinds Unsupported, TooLarge and Invalid, and never quote the
// body.
func (b Body) Decode(r *http.Request, dst any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return fault.New(fault.Unsupported, "Content-Type must be application/json")
	}
	limit := b.limit()
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return Malformed("cannot read the body")
	}
	if int64(len(data)) > limit {
		return fault.New(fault.TooLarge, "body is larger than %d bytes", limit)
	}
	return b.Unmarshal(data, dst)
}

// Unmarshal is Decode without HTTP: the rules for a body already read.
func (b Body) Unmarshal(data []byte, dst any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return Malformed("body is empty; expected one JSON object")
	}
	if trimmed[0] != '{' {
		return Malformed("body must be one JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if !b.Lenient {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		return Malformed("%s", describe(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Malformed("expected one JSON object")
	}
	return nil
}

// describe turns decoder errors into messages that name the field and
// never quote the body (one may carry a password): of a wrong value only
// its JSON type is told, of bad syntax only where it is.
func describe(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var refused *fault.Error
	switch {
	case errors.As(err, &refused): // a type's own check (input.Button)
		return refused.Msg
	case errors.As(err, &typeErr):
		got, _, _ := strings.Cut(typeErr.Value, " ") // "number 1.5": the type only
		if typeErr.Field != "" {
			return fmt.Sprintf("field %q must be %s, not %s", typeErr.Field, kindName(typeErr.Type.Kind().String()), got)
		}
		return fmt.Sprintf("body must be one JSON object, not %s", got)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("invalid JSON at byte %d", syntaxErr.Offset)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON"
	}
	return "invalid JSON"
}

func kindName(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "an integer"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "bool":
		return "a boolean"
	case k == "ptr":
		return "a value of the right type"
	}
	return "a " + k
}
