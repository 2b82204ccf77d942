package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// statusClientClosed is logged (never sent) for requests whose client went away.
const statusClientClosed = 499

// writeJSON answers v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorBody is the /api/v1 error shape.
type errorBody struct {
	Error client.Error `json:"error"`
}

// openAIError is the /v1 error shape.
type openAIError struct {
	Error openAIErrorDetail `json:"error"`
}

type openAIErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// writeError answers an error in the shape of the request's API: OpenAI's for /v1/, ours otherwise.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	msg = clipEchoes(msg)
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		writeOpenAIError(w, status, msg, "")
		return
	}
	writeJSON(w, status, errorBody{Error: client.Error{Status: status, Message: msg}})
}

// writeOpenAIError answers an OpenAI-shaped error; param may be empty.
func writeOpenAIError(w http.ResponseWriter, status int, msg, param string) {
	d := openAIErrorDetail{Message: msg, Type: openAIErrorType(status)}
	if param != "" {
		d.Param = &param
	}
	writeJSON(w, status, openAIError{Error: d})
}

func openAIErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// errorStatus maps a backend error onto an HTTP status and message.
func errorStatus(err error) (int, string) {
	var ce *client.Error
	switch {
	case errors.As(err, &ce):
		return ce.Status, ce.Message
	case errors.Is(err, client.ErrNotFound):
		return http.StatusNotFound, err.Error()
	case errors.Is(err, client.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, err.Error()
	case errors.Is(err, client.ErrInvalid):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, client.ErrUnauthorized):
		return http.StatusForbidden, err.Error()
	case errors.Is(err, client.ErrUnavailable):
		return http.StatusServiceUnavailable, err.Error()
	case errors.Is(err, context.Canceled):
		return statusClientClosed, "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, err.Error()
	}
	return http.StatusInternalServerError, err.Error()
}

// fail answers a backend error. When the client has gone away nothing is written.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := errorStatus(err)
	if ce := (*client.Error)(nil); errors.As(err, &ce) && ce.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ce.RetryAfter))
	}
	if r.Context().Err() != nil {
		s.log.Debug("api: client gone", "method", r.Method, "path", r.URL.Path, "err", err)
		return
	}
	if status >= 500 {
		s.log.Warn("api: request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	s.writeError(w, r, status, msg)
}

// requestError is a decoding failure with its status.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, args ...any) *requestError {
	return &requestError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// decodeOptions say how strict decodeJSON is.
type decodeOptions struct {
	allowEmpty    bool  // an empty body leaves v unchanged
	allowUnknowns bool  // unknown fields are ignored (the OpenAI routes)
	extra         int64 // bytes the route takes beyond the server's body limit
}

// decodeJSON reads one JSON object from the body into v, bounded by the server's body limit.
// Unknown fields, malformed JSON and anything after the object are 400; an oversized body is 413.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any, o decodeOptions) *requestError {
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody+o.extra)
	dec := json.NewDecoder(r.Body)
	if !o.allowUnknowns {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) && o.allowEmpty {
			return nil
		}
		return s.decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			if re := s.decodeError(err); re.status == http.StatusRequestEntityTooLarge {
				return re
			}
		}
		return badRequest("unexpected data after the JSON object")
	}
	return nil
}

func (s *Server) decodeError(err error) *requestError {
	var (
		tooBig *http.MaxBytesError
		syn    *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &tooBig):
		return &requestError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit)}
	case errors.Is(err, io.EOF):
		return badRequest("request body is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: unexpected end of input")
	case errors.As(err, &syn):
		return badRequest("malformed JSON: %s (at byte %d)", syn.Error(), syn.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return badRequest("field %q: cannot use JSON %s as %s", typ.Field, typ.Value, typ.Type)
		}
		return badRequest("cannot use JSON %s as %s", typ.Value, typ.Type)
	}
	// Unknown fields and other decoder complaints: `json: unknown field "foo"`.
	return badRequest("%s", strings.TrimPrefix(err.Error(), "json: "))
}
