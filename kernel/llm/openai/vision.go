package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/llm"
)

// visionProbeTimeout bounds the model-list lookup that decides whether a request's images are
// sent: a slow /models must not hold a turn.
const visionProbeTimeout = 5 * time.Second

// hasImages reports whether any message carries images.
func hasImages(msgs []llm.Message) bool {
	for _, m := range msgs {
		if len(m.Images) > 0 {
			return true
		}
	}
	return false
}

// Vision reports whether model (empty: the configured one) takes images. Config.Vision decides
// when set; otherwise the server's model list does, as servers publish it: OpenRouter's
// architecture.input_modalities, an input_modalities or modalities.input list, a
// capabilities list or object naming vision; and, for an Ollama server (whose OpenAI-compatible
// list says nothing of it), the capabilities of POST /api/show. The answer is cached per model;
// a failed lookup answers false (the images' text still reaches the model) and is retried on the
// next request.
func (c *Client) Vision(ctx context.Context, model string) bool {
	if c.cfg.Vision != nil {
		return *c.cfg.Vision
	}
	if model == "" {
		model = c.cfg.Model
	}
	if v, ok := c.vision.Load(model); ok {
		return v.(bool)
	}
	ctx, cancel := context.WithTimeout(ctx, visionProbeTimeout)
	defer cancel()
	v, known, err := c.probeVision(ctx, model)
	if err != nil {
		c.log.Info("cannot tell whether the model takes images; sending their text only", "provider", c.cfg.Name, "model", model, "err", err)
		return false
	}
	if !known {
		c.log.Info("the server does not say whether the model takes images; sending their text only (set vision on the provider to send them)", "provider", c.cfg.Name, "model", model)
	}
	c.vision.Store(model, v)
	return v
}

// modelEntry is the part of a /models entry that speaks of input modalities.
type modelEntry struct {
	ID           string `json:"id"`
	Architecture *struct {
		InputModalities []string `json:"input_modalities"`
	} `json:"architecture"`
	InputModalities []string        `json:"input_modalities"`
	Modalities      json.RawMessage `json:"modalities"`
	Capabilities    json.RawMessage `json:"capabilities"`
}

// vision reads the entry: whether it says, and what.
func (e modelEntry) vision() (v, known bool) {
	if e.Architecture != nil && e.Architecture.InputModalities != nil {
		return slices.Contains(e.Architecture.InputModalities, "image"), true
	}
	if e.InputModalities != nil {
		return slices.Contains(e.InputModalities, "image"), true
	}
	if len(e.Modalities) > 0 {
		var m struct {
			Input []string `json:"input"`
		}
		if json.Unmarshal(e.Modalities, &m) == nil && m.Input != nil {
			return slices.Contains(m.Input, "image"), true
		}
	}
	return capabilitiesVision(e.Capabilities)
}

// capabilitiesVision reads a capabilities list (["completion","vision"]) or object
// ({"vision": true}).
func capabilitiesVision(raw json.RawMessage) (v, known bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return false, false
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return slices.Contains(list, "vision"), true
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		if b, ok := obj["vision"].(bool); ok {
			return b, true
		}
	}
	return false, false
}

// probeVision asks the server about model.
func (c *Client) probeVision(ctx context.Context, model string) (v, known bool, err error) {
	var list struct {
		Data []modelEntry `json:"data"`
	}
	err = c.do(ctx, http.MethodGet, "/models", nil, func(resp *http.Response) error {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &list); err != nil {
			return c.invalidJSON(err, b)
		}
		return nil
	})
	if err != nil {
		return false, false, unwrapRetryable(err)
	}
	for _, e := range list.Data {
		if e.ID == model {
			if v, known := e.vision(); known {
				return v, true, nil
			}
		}
	}
	if v, known := c.ollamaVision(ctx, model); known {
		return v, true, nil
	}
	return false, false, nil
}

// ollamaVision asks an Ollama server (base URL …/v1) for the model's capabilities; known is
// false for any other server.
func (c *Client) ollamaVision(ctx context.Context, model string) (v, known bool) {
	root, ok := strings.CutSuffix(c.base, "/v1")
	if !ok {
		return false, false
	}
	body, _ := json.Marshal(map[string]string{"model": model})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, root+"/api/show", bytes.NewReader(body))
	if err != nil {
		return false, false
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return false, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, false
	}
	var show struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&show) != nil {
		return false, false
	}
	return capabilitiesVision(show.Capabilities)
}
