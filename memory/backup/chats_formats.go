package backup

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/hologramagent/hologram/memory"
)

// The two chat history formats, as far as the import reads them (see the notes in chats.go).

type gptConversation struct {
	ID             string             `json:"id"`
	ConversationID string             `json:"conversation_id"`
	Title          *string            `json:"title"`
	CreateTime     *float64           `json:"create_time"`
	UpdateTime     *float64           `json:"update_time"`
	CurrentNode    *string            `json:"current_node"`
	Mapping        map[string]gptNode `json:"mapping"`
}

type gptNode struct {
	Message  *gptMessage `json:"message"`
	Parent   *string     `json:"parent"`
	Children []string    `json:"children"`
}

type gptMessage struct {
	ID     string `json:"id"`
	Author struct {
		Role string `json:"role"`
	} `json:"author"`
	CreateTime *float64 `json:"create_time"`
	Content    struct {
		ContentType string            `json:"content_type"`
		Parts       []json.RawMessage `json:"parts"`
		Text        *string           `json:"text"`
		Language    string            `json:"language"`
	} `json:"content"`
	Recipient string `json:"recipient"`
	Metadata  struct {
		Hidden    bool   `json:"is_visually_hidden_from_conversation"`
		ModelSlug string `json:"model_slug"`
	} `json:"metadata"`
}

// gptPart is a part that is not a string: {"content_type": "image_asset_pointer", …}.
type gptPart struct {
	ContentType string `json:"content_type"`
	Text        string `json:"text"`
}

// parseChatGPT decodes the next conversation of a ChatGPT export.
func parseChatGPT(dec *json.Decoder) (conv, error) {
	var g gptConversation
	err := dec.Decode(&g)
	c := conv{id: g.ID, created: unixPtr(g.CreateTime), updated: unixPtr(g.UpdateTime)}
	if c.id == "" {
		c.id = g.ConversationID
	}
	if g.Title != nil {
		c.title = cleanText(*g.Title)
	}
	if err != nil {
		return c, err
	}
	if c.id == "" {
		return c, convErr(`no "id" or "conversation_id" (a re-import could not tell it apart)`)
	}
	if len(g.Mapping) == 0 {
		return c, convErr(`no "mapping" (the conversation's messages)`)
	}
	if g.CurrentNode == nil || *g.CurrentNode == "" {
		return c, convErr(`no "current_node" (the branch the user last saw)`)
	}
	path, err := walkBranch(*g.CurrentNode, func(id string) (string, bool) {
		n, ok := g.Mapping[id]
		if !ok {
			return "", false
		}
		if n.Parent == nil {
			return "", true
		}
		return *n.Parent, true
	})
	if err != nil {
		return c, err
	}
	on := make(map[string]bool, len(path))
	for _, id := range path {
		on[id] = true
	}
	for id, n := range g.Mapping {
		if !on[id] && n.Message != nil {
			c.skip(SkipBranch)
		}
	}
	for _, id := range path {
		m := g.Mapping[id].Message
		if m == nil {
			continue // the root the app makes
		}
		if mm, ok := gptMessageOf(&c, id, m); ok {
			c.msgs = append(c.msgs, mm)
		}
	}
	fillTimes(&c)
	return c, nil
}

// gptMessageOf turns a message of the current branch into a message to import, or counts why
// it is skipped.
func gptMessageOf(c *conv, id string, m *gptMessage) (msg, bool) {
	var role memory.Role
	switch m.Author.Role {
	case "system":
		c.skip(SkipSystem)
		return msg{}, false
	case "tool":
		c.skip(SkipTool)
		return msg{}, false
	case "user":
		role = memory.RoleUser
	case "assistant":
		role = memory.RoleAssistant
		if m.Recipient != "" && m.Recipient != "all" {
			c.skip(SkipTool) // a call to a tool (python, browser, dalle…)
			return msg{}, false
		}
	default:
		c.skip(SkipOther)
		return msg{}, false
	}
	if m.Metadata.Hidden {
		c.skip(SkipHidden)
		return msg{}, false
	}
	var text []string
	switch ct := m.Content.ContentType; ct {
	case "text", "multimodal_text", "":
		for _, raw := range m.Content.Parts {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				if s = cleanText(s); s != "" {
					text = append(text, s)
				}
				continue
			}
			var p gptPart
			if json.Unmarshal(raw, &p) != nil {
				c.skip(SkipOther)
				continue
			}
			switch {
			case strings.Contains(p.ContentType, "image"):
				c.skip(SkipImage)
			case strings.Contains(p.ContentType, "audio") || strings.Contains(p.ContentType, "video"):
				c.skip(SkipAudio)
			case p.ContentType == "audio_transcription" && cleanText(p.Text) != "":
				text = append(text, cleanText(p.Text))
			default:
				c.skip(SkipOther)
			}
		}
	case "code":
		if m.Content.Text != nil {
			if s := cleanText(*m.Content.Text); s != "" {
				text = append(text, "```"+m.Content.Language+"\n"+s+"\n```")
			}
		}
	case "thoughts", "reasoning_recap":
		c.skip(SkipReasoning)
		return msg{}, false
	case "user_editable_context", "model_editable_context":
		c.skip(SkipContext)
		return msg{}, false
	default:
		c.skip(SkipOther)
		return msg{}, false
	}
	if len(text) == 0 {
		c.skip(SkipEmpty)
		return msg{}, false
	}
	if m.ID != "" {
		id = m.ID
	}
	return msg{id: id, role: role, text: strings.Join(text, "\n\n"), t: unixPtr(m.CreateTime), model: m.Metadata.ModelSlug}, true
}

type owuiChat struct {
	ID        string   `json:"id"`
	Title     *string  `json:"title"`
	CreatedAt *float64 `json:"created_at"`
	UpdatedAt *float64 `json:"updated_at"`
	Chat      struct {
		Title   *string `json:"title"`
		History struct {
			Messages  map[string]owuiMessage `json:"messages"`
			CurrentID *string                `json:"currentId"`
		} `json:"history"`
		Messages  []owuiMessage `json:"messages"`
		Timestamp *float64      `json:"timestamp"`
	} `json:"chat"`
}

type owuiMessage struct {
	ID        string          `json:"id"`
	ParentID  *string         `json:"parentId"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Timestamp *float64        `json:"timestamp"`
	Model     string          `json:"model"`
	Files     []owuiFile      `json:"files"`
}

type owuiFile struct {
	Type string `json:"type"`
	URL  string `json:"url"`
	Name string `json:"name"`
}

// parseOpenWebUI decodes the next chat of an Open WebUI export.
func parseOpenWebUI(dec *json.Decoder) (conv, error) {
	var o owuiChat
	err := dec.Decode(&o)
	c := conv{id: o.ID, created: unixPtr(o.CreatedAt), updated: unixPtr(o.UpdatedAt)}
	switch {
	case o.Title != nil:
		c.title = cleanText(*o.Title)
	case o.Chat.Title != nil:
		c.title = cleanText(*o.Chat.Title)
	}
	if c.created.IsZero() {
		c.created = unixPtr(o.Chat.Timestamp)
	}
	if err != nil {
		return c, err
	}
	if c.id == "" {
		return c, convErr(`no "id" (a re-import could not tell it apart)`)
	}
	var branch []owuiMessage
	if h := o.Chat.History; len(h.Messages) > 0 {
		if h.CurrentID == nil || *h.CurrentID == "" {
			return c, convErr(`no "chat.history.currentId" (the branch the user last saw)`)
		}
		path, err := walkBranch(*h.CurrentID, func(id string) (string, bool) {
			m, ok := h.Messages[id]
			if !ok {
				return "", false
			}
			if m.ParentID == nil {
				return "", true
			}
			return *m.ParentID, true
		})
		if err != nil {
			return c, err
		}
		for range len(h.Messages) - len(path) {
			c.skip(SkipBranch)
		}
		for _, id := range path {
			m := h.Messages[id]
			if m.ID == "" {
				m.ID = id
			}
			branch = append(branch, m)
		}
	} else {
		// An old export without the history tree: the messages as listed.
		for i, m := range o.Chat.Messages {
			if m.ID == "" {
				return c, convErr("message %d has no id", i+1)
			}
			branch = append(branch, m)
		}
	}
	for _, m := range branch {
		if mm, ok := owuiMessageOf(&c, m); ok {
			c.msgs = append(c.msgs, mm)
		}
	}
	fillTimes(&c)
	return c, nil
}

// owuiMessageOf turns a message of the current branch into a message to import, or counts why
// it is skipped: inline images become image blocks.
func owuiMessageOf(c *conv, m owuiMessage) (msg, bool) {
	var role memory.Role
	switch m.Role {
	case "user":
		role = memory.RoleUser
	case "assistant":
		role = memory.RoleAssistant
	case "system":
		c.skip(SkipSystem)
		return msg{}, false
	case "tool":
		c.skip(SkipTool)
		return msg{}, false
	default:
		c.skip(SkipOther)
		return msg{}, false
	}
	out := msg{id: m.ID, role: role, t: unixPtr(m.Timestamp), model: m.Model}
	var parts []string
	var s string
	var list []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	switch {
	case len(m.Content) == 0 || string(m.Content) == "null":
	case json.Unmarshal(m.Content, &s) == nil:
		if s = cleanText(s); s != "" {
			parts = append(parts, s)
		}
	case json.Unmarshal(m.Content, &list) == nil: // OpenAI-style content parts
		for _, p := range list {
			switch p.Type {
			case "text":
				if t := cleanText(p.Text); t != "" {
					parts = append(parts, t)
				}
			case "image_url":
				if b, ok := dataImage(p.ImageURL.URL, ""); ok {
					out.blocks = append(out.blocks, b)
				} else {
					c.skip(SkipImage)
				}
			default:
				c.skip(SkipOther)
			}
		}
	default:
		c.skip(SkipOther)
	}
	for _, f := range m.Files {
		if f.Type == "image" {
			if b, ok := dataImage(f.URL, f.Name); ok {
				out.blocks = append(out.blocks, b)
				continue
			}
			c.skip(SkipImage)
			continue
		}
		c.skip(SkipFile)
	}
	if len(parts) == 0 && len(out.blocks) == 0 {
		c.skip(SkipEmpty)
		return msg{}, false
	}
	out.text = strings.Join(parts, "\n\n")
	return out, true
}

// maxInlineImage bounds an inline image's data (the store's block limit is larger; an inline
// image of a chat app is a photo of a few MB).
const maxInlineImage = 32 << 20

// dataImage decodes a data: URL of an image ("data:image/png;base64,…") into an image block.
func dataImage(url, name string) (memory.Block, bool) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return memory.Block{}, false
	}
	meta, payload, ok := strings.Cut(rest, ",")
	mime, isB64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isB64 || !strings.HasPrefix(mime, "image/") || base64.StdEncoding.DecodedLen(len(payload)) > maxInlineImage {
		return memory.Block{}, false
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil || len(data) == 0 {
		return memory.Block{}, false
	}
	return memory.Block{Kind: memory.BlockImage, Name: name, MIME: mime, Data: data}, true
}
