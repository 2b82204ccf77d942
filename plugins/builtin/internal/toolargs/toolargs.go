// Package toolargs reads the arguments of a built-in plugin's tool call (a JSON object the
// model wrote) into the tool's argument struct, strictly: a field the struct does not have is
// an error naming it, so a model's misspelt argument is reported instead of ignored. Every
// error reads "bad arguments: …", which the model sees as the call's result.
//
// The package imports only the standard library: it is linked into the plugins' binaries.
package toolargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Decode reads the first JSON value of args into v, refusing unknown fields.
func Decode(args json.RawMessage, v any) error {
	_, err := decode(args, v)
	return err
}

// DecodeWhole is [Decode] for the whole of args: no arguments at all (empty or blank) read as
// {}, and anything after the JSON object is an error.
func DecodeWhole(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec, err := decode(args, v)
	if err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("bad arguments: trailing data after the JSON object")
	}
	return nil
}

// decode decodes the first value of args into v and returns the decoder, positioned after it.
func decode(args json.RawMessage, v any) (*json.Decoder, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("bad arguments: %w", err)
	}
	return dec, nil
}
