package memadmin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
)

// Settings of the base prompt.
const (
	settingBasePrompt = "prompt.base" // the template; unset: DefaultBasePrompt
	settingOwnerName  = "owner.name"
)

// DefaultBasePrompt is the built-in base system prompt. It names what the recall text of the
// memory engine calls its parts ("Known facts", "Memories that may be relevant") and the tools
// the kernel always offers (coldcontext_query, tool_search).
const DefaultBasePrompt = `You are HologramAgent, the personal AI agent of {owner}, running on their own computer.
It is {date}, {time} ({timezone}).

Memory: you remember earlier conversations. When memory holds something that may help, this prompt carries it under "Known facts" (long-term memory; the newest statement wins) and "Memories that may be relevant" (earlier messages with their dates). Use it only when it helps; the coldcontext_query tool searches further back.
Citing memory: when an answer rests on something remembered, say so and when it was said, e.g. "(you told me on 2025-05-03)". Never invent a memory: when memory has nothing on it, say you do not know.

Tools: you may call the tools this request offers (files, notes, the shell and whatever the owner installed; tool_search finds more). Use them when they help, say what you did with them, and ask before doing anything that cannot be undone.`

// BasePrompt implements client.PromptService.
func (a *Admin) BasePrompt(ctx context.Context) (client.BasePrompt, error) {
	tmpl, def, err := a.baseTemplate(ctx)
	if err != nil {
		return client.BasePrompt{}, err
	}
	owner, err := a.setting(ctx, settingOwnerName)
	if err != nil {
		return client.BasePrompt{}, err
	}
	return client.BasePrompt{Template: tmpl, Default: def, Owner: owner, Preview: a.render(tmpl, owner)}, nil
}

// SetBasePrompt implements client.PromptService.
func (a *Admin) SetBasePrompt(ctx context.Context, p client.BasePrompt) (client.BasePrompt, error) {
	owner := strings.TrimSpace(p.Owner)
	switch {
	case len(p.Template) > client.MaxBasePrompt:
		return client.BasePrompt{}, invalid("the base prompt has %d bytes, at most %d", len(p.Template), client.MaxBasePrompt)
	case !utf8.ValidString(p.Template):
		return client.BasePrompt{}, invalid("the base prompt is not valid UTF-8")
	case utf8.RuneCountInString(owner) > client.MaxOwnerName:
		return client.BasePrompt{}, invalid("the owner's name has at most %d characters", client.MaxOwnerName)
	case strings.IndexFunc(owner, unicode.IsControl) >= 0:
		return client.BasePrompt{}, invalid("the owner's name must be one line without control characters")
	}
	var err error
	if p.Default {
		if err = a.DB.DeleteSetting(ctx, settingBasePrompt); errors.Is(err, memory.ErrNotFound) {
			err = nil
		}
	} else {
		err = a.DB.SetSetting(ctx, settingBasePrompt, p.Template)
	}
	if err == nil {
		err = a.DB.SetSetting(ctx, settingOwnerName, owner)
	}
	if err != nil {
		return client.BasePrompt{}, mapErr(err)
	}
	return a.BasePrompt(ctx)
}

// RenderBasePrompt is the base prompt of a turn in a session of scope sc (the agent's
// Options.BasePrompt): the owner's name is said only in the owner's private sessions. A store
// error leaves the turn without a base prompt (logged).
func (a *Admin) RenderBasePrompt(ctx context.Context, session string, sc memory.Scope) string {
	tmpl, _, err := a.baseTemplate(ctx)
	owner := ""
	if err == nil && sc.Kind == memory.ScopePrivate {
		owner, err = a.setting(ctx, settingOwnerName)
	}
	if err != nil {
		a.Log.Warn("base prompt not read; the turn goes without it", "session", session, "err", err)
		return ""
	}
	return a.render(tmpl, owner)
}

func (a *Admin) baseTemplate(ctx context.Context) (string, bool, error) {
	v, err := a.DB.GetSetting(ctx, settingBasePrompt)
	if errors.Is(err, memory.ErrNotFound) {
		return DefaultBasePrompt, true, nil
	}
	return v, false, mapErr(err)
}

func (a *Admin) setting(ctx context.Context, key string) (string, error) {
	v, err := a.DB.GetSetting(ctx, key)
	if errors.Is(err, memory.ErrNotFound) {
		return "", nil
	}
	return v, mapErr(err)
}

func (a *Admin) render(tmpl, owner string) string {
	if owner == "" {
		owner = "the owner"
	}
	now := a.Clock()
	return strings.NewReplacer("{date}", now.Format("Monday, 2 January 2006"), "{time}", now.Format("15:04"),
		"{timezone}", zoneName(now), "{owner}", owner).Replace(tmpl)
}

// zoneName names now's time zone: its IANA name where known (TZ, /etc/localtime), and its
// offset, e.g. "Europe/Berlin, UTC+01:00".
func zoneName(now time.Time) string {
	name := now.Location().String()
	if name == "Local" {
		name = strings.TrimPrefix(os.Getenv("TZ"), ":")
		if name == "" {
			if l, err := os.Readlink("/etc/localtime"); err == nil {
				if _, after, ok := strings.Cut(filepath.ToSlash(l), "zoneinfo/"); ok {
					name = after
				}
			}
		}
	}
	off := now.Format("-07:00")
	if name == "" || name == "UTC" {
		return "UTC" + off
	}
	return fmt.Sprintf("%s, UTC%s", name, off)
}
