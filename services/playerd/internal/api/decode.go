package api

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

// MaxBody is the largest request body accepted.
const MaxBody = 64 << 10

func badRequest(format string, a ...any) error { return fault.New(fault.Invalid, format, a...) }

// decodeBody reads exactly one JSON object into dst. It refuses other
// content types (415), bodies over MaxBody (413), unknown fields, wrong types,
// trailing data and anything that is not an object (400).
func decodeBody(r *http.Request, dst any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return fault.New(fault.Unsupported, "Content-Type must be application/json")
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return badRequest("cannot read body: %v", err)
	}
	if len(data) > MaxBody {
		return fault.New(fault.TooLarge, "body is larger than %d bytes", MaxBody)
	}
	return decodeObject(data, dst)
}

// decodeObject is the body decoder without HTTP, the fuzz target.
func decodeObject(data []byte, dst any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return badRequest("body is empty; expected one JSON object")
	}
	if trimmed[0] != '{' {
		return badRequest("body must be one JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return badRequest("%s", describe(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("expected one JSON object")
	}
	return nil
}

// describe turns decoder errors into messages that name the field.
func describe(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var refused *fault.Error
	switch {
	case errors.As(err, &refused): // a type's own check (input.Button)
		return refused.Msg
	case errors.As(err, &typeErr):
		if typeErr.Field != "" {
			return fmt.Sprintf("field %q must be %s, not %s", typeErr.Field, kindName(typeErr.Type.Kind().String()), typeErr.Value)
		}
		return fmt.Sprintf("body must be one JSON object, not %s", typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("invalid JSON at byte %d: %v", syntaxErr.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON"
	}
	return "invalid JSON: " + err.Error()
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
