package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Bounds of the memory admin requests, checked by the API.
const (
	// DefaultGraphLimit is the page size of a [GraphQuery] whose Limit is zero.
	DefaultGraphLimit = 1000
	// MaxGraphLimit bounds [GraphQuery].Limit.
	MaxGraphLimit = 10000
	// MaxGraphEvents bounds [GraphQuery].Events.
	MaxGraphEvents = 1000
	// MaxForgetEvents bounds how many events one Forget call may name.
	MaxForgetEvents = 10000
)

// Graph returns one page of the graph (GET /api/v1/memory/graph?scope=…&history=1&after=…&
// limit=…&events=…). Zero fields of q are left out of the query, so the kernel's defaults apply.
func (c *HTTP) Graph(ctx context.Context, q GraphQuery) (GraphPage, error) {
	v := url.Values{}
	if q.Scope != "" {
		v.Set("scope", q.Scope)
	}
	if q.History {
		v.Set("history", "1")
	}
	if q.After != "" {
		v.Set("after", q.After)
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Events != 0 {
		v.Set("events", strconv.Itoa(q.Events))
	}
	if q.Scene != "" {
		v.Set("scene", q.Scene)
	}
	path := "/api/v1/memory/graph"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out GraphPage
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// EventContext returns an event with its neighbours (GET
// /api/v1/memory/events/{id}?radius=N).
func (c *HTTP) EventContext(ctx context.Context, id int64, radius int) ([]MemoryHit, error) {
	if err := checkID("event context", "event", id); err != nil {
		return nil, err
	}
	if radius < 0 || radius > MaxContextRadius {
		return nil, fmt.Errorf("event context: radius must be from 0 to %d, got %d: %w", MaxContextRadius, radius, ErrInvalid)
	}
	path := "/api/v1/memory/events/" + strconv.FormatInt(id, 10)
	if radius != 0 {
		path += "?radius=" + strconv.Itoa(radius)
	}
	var out struct {
		Events []MemoryHit `json:"events"`
	}
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out.Events, err
}

// entityPath is the path of an entity.
func entityPath(id int64) string { return "/api/v1/memory/entities/" + strconv.FormatInt(id, 10) }

// checkID refuses ids that are not positive before any request is sent.
func checkID(op, what string, id int64) error {
	if id <= 0 {
		return fmt.Errorf("%s: %s id must be positive, got %d: %w", op, what, id, ErrInvalid)
	}
	return nil
}

// Entity returns an entity with its triples and blocks (GET /api/v1/memory/entities/{id}).
func (c *HTTP) Entity(ctx context.Context, id int64) (EntityDetail, error) {
	if err := checkID("entity", "entity", id); err != nil {
		return EntityDetail{}, err
	}
	var out EntityDetail
	err := c.do(ctx, http.MethodGet, entityPath(id), nil, &out)
	return out, err
}

// entityInput is the body of the entity routes: only the fields a caller may set.
type entityInput struct {
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"`
	Text  string `json:"text,omitempty"`
	Scope string `json:"scope,omitempty"`
}

// PutEntity creates an entity (POST /api/v1/memory/entities) when e.ID is 0, else edits it
// (PUT /api/v1/memory/entities/{id}). Only name, kind, text and scope are sent.
func (c *HTTP) PutEntity(ctx context.Context, e Entity) (Entity, error) {
	in := entityInput{Name: e.Name, Kind: e.Kind, Text: e.Text, Scope: e.Scope}
	var out Entity
	if e.ID == 0 {
		err := c.do(ctx, http.MethodPost, "/api/v1/memory/entities", in, &out)
		return out, err
	}
	if err := checkID("put entity", "entity", e.ID); err != nil {
		return Entity{}, err
	}
	err := c.do(ctx, http.MethodPut, entityPath(e.ID), in, &out)
	return out, err
}

// AddTriple adds an owner-made triple (POST /api/v1/memory/triples).
func (c *HTTP) AddTriple(ctx context.Context, t TripleInput) (Triple, error) {
	var out Triple
	err := c.do(ctx, http.MethodPost, "/api/v1/memory/triples", t, &out)
	return out, err
}

// EditTriple supersedes a triple by a corrected one (PUT /api/v1/memory/triples/{id}) and returns
// the new triple.
func (c *HTTP) EditTriple(ctx context.Context, id int64, t TripleInput) (Triple, error) {
	if err := checkID("edit triple", "triple", id); err != nil {
		return Triple{}, err
	}
	var out Triple
	err := c.do(ctx, http.MethodPut, "/api/v1/memory/triples/"+strconv.FormatInt(id, 10), t, &out)
	return out, err
}

// Pin pins or unpins an entity, a triple or a block (POST /api/v1/memory/pin).
func (c *HTTP) Pin(ctx context.Context, p PinRequest) error {
	return c.do(ctx, http.MethodPost, "/api/v1/memory/pin", p, nil)
}

// MergeEntities moves every triple and block of from onto into and deletes from
// (POST /api/v1/memory/entities/{into}/merge with {"from": from}).
func (c *HTTP) MergeEntities(ctx context.Context, into, from int64) (Entity, error) {
	if err := checkID("merge entities", "entity", into); err != nil {
		return Entity{}, err
	}
	if err := checkID("merge entities", "entity", from); err != nil {
		return Entity{}, err
	}
	var out Entity
	err := c.do(ctx, http.MethodPost, entityPath(into)+"/merge", struct {
		From int64 `json:"from"`
	}{from}, &out)
	return out, err
}

// DeleteEntity deletes an entity with its triples and blocks
// (DELETE /api/v1/memory/entities/{id}).
func (c *HTTP) DeleteEntity(ctx context.Context, id int64) error {
	if err := checkID("delete entity", "entity", id); err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, entityPath(id), nil, nil)
}

// Forget deletes events and what only they held up (POST /api/v1/memory/forget).
func (c *HTTP) Forget(ctx context.Context, eventIDs []int64) (ForgetResult, error) {
	if len(eventIDs) == 0 {
		return ForgetResult{}, fmt.Errorf("forget: no event ids: %w", ErrInvalid)
	}
	var out ForgetResult
	err := c.do(ctx, http.MethodPost, "/api/v1/memory/forget", struct {
		Events []int64 `json:"events"`
	}{eventIDs}, &out)
	return out, err
}

// Scenes lists the scenes (GET /api/v1/memory/scenes).
func (c *HTTP) Scenes(ctx context.Context) ([]Scene, error) {
	var out struct {
		Scenes []Scene `json:"scenes"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/memory/scenes", nil, &out)
	return out.Scenes, err
}

// MemoryGC runs cooling, distillation and decay now (POST /api/v1/memory/gc). Distillation may
// call an LLM, so the call has no timeout of its own: cancel ctx instead.
func (c *HTTP) MemoryGC(ctx context.Context) (GCReport, error) {
	req, err := c.newRequest(ctx, http.MethodPost, "/api/v1/memory/gc", nil)
	if err != nil {
		return GCReport{}, err
	}
	var out GCReport
	err = c.stream(req, func(body io.Reader) error { return decodeBody(req, body, &out) })
	return out, err
}

// ExportMemory writes the memory in req.Format (empty: json) to w
// (GET /api/v1/memory/export?format=…&include_secrets=1). The export is streamed and has no
// timeout of its own: cancel ctx instead. A connection that breaks before the end of the export
// is an error, so w never silently holds a truncated export.
func (c *HTTP) ExportMemory(ctx context.Context, req ExportRequest, w io.Writer) error {
	v := url.Values{}
	if req.Format != "" {
		v.Set("format", req.Format)
	}
	if req.IncludeSecrets {
		v.Set("include_secrets", "1")
	}
	path := "/api/v1/memory/export"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	hreq, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	hreq.Header.Set("Accept", "*/*")
	return c.stream(hreq, func(body io.Reader) error {
		if _, err := io.Copy(w, body); err != nil {
			return fmt.Errorf("export memory: %w", err)
		}
		return nil
	})
}

// ImportMemory sends a file in format (json or jsonl; empty: json) read from r
// (POST /api/v1/memory/import?format=…). The upload is streamed and has no timeout of its own:
// cancel ctx instead.
func (c *HTTP) ImportMemory(ctx context.Context, format string, r io.Reader) (ImportReport, error) {
	if format == "" {
		format = FormatJSON
	}
	hreq, err := c.newRequest(ctx, http.MethodPost, "/api/v1/memory/import?"+url.Values{"format": {format}}.Encode(), nil)
	if err != nil {
		return ImportReport{}, err
	}
	// A nil body sets no length; with a body and length 0 the transport streams it chunked.
	hreq.Body = io.NopCloser(r)
	hreq.ContentLength = 0
	ct := "application/json"
	if format == FormatJSONL {
		ct = "application/x-ndjson"
	}
	hreq.Header.Set("Content-Type", ct)
	var out ImportReport
	err = c.stream(hreq, func(body io.Reader) error { return decodeBody(hreq, body, &out) })
	return out, err
}

// stream performs req without the client's timeout (ctx bounds it) and hands a 2xx body to read.
func (c *HTTP) stream(req *http.Request, read func(io.Reader) error) error {
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return read(resp.Body)
}

// decodeBody decodes a JSON answer of req into out.
func decodeBody(req *http.Request, body io.Reader, out any) error {
	if err := json.NewDecoder(body).Decode(out); err != nil {
		return fmt.Errorf("decode %s %s: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// maxThumbnailBytes bounds a thumbnail answer (a 256 × 256 RGBA PNG is at most ≈ 260 KiB).
const maxThumbnailBytes = 4 << 20

// Thumbnail returns an image block's thumbnail PNG (GET /api/v1/memory/blocks/{id}/thumbnail).
func (c *HTTP) Thumbnail(ctx context.Context, block string) ([]byte, error) {
	if strings.TrimSpace(block) == "" {
		return nil, fmt.Errorf("%w: the block id is empty", ErrInvalid)
	}
	req, err := c.newRequest(ctx, http.MethodGet, ThumbnailPath(block), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "image/png")
	var out []byte
	err = c.stream(req, func(body io.Reader) error {
		var err error
		if out, err = io.ReadAll(io.LimitReader(body, maxThumbnailBytes+1)); err != nil {
			return fmt.Errorf("thumbnail of block %s: %w", block, err)
		}
		if len(out) > maxThumbnailBytes {
			return fmt.Errorf("thumbnail of block %s: answer over %d bytes", block, maxThumbnailBytes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
