package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// NewFallback returns a [Provider] that tries providers in order. When one fails it moves on to
// the next, except when the caller's ctx is done (the error is returned at once) or when the
// failing provider already streamed a [Delta] to the caller (falling back would show the user a
// second, different answer after a partial one). When every provider fails, the error names each
// of them and joins their errors, so errors.As finds each [*APIError]. With no providers Chat
// returns [ErrNoProvider]. Name is the first provider's name, or "fallback" when there is none.
// The result is safe for concurrent use when the providers are.
func NewFallback(providers ...Provider) Provider {
	return &fallback{providers: append([]Provider(nil), providers...)}
}

type fallback struct {
	providers []Provider
}

func (f *fallback) Name() string {
	if len(f.providers) == 0 {
		return "fallback"
	}
	return f.providers[0].Name()
}

// Models lists the models of the first provider that answers.
func (f *fallback) Models(ctx context.Context) ([]string, error) {
	var errs []error
	for _, p := range f.providers {
		ids, err := p.Models(ctx)
		if err == nil {
			return ids, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, ErrNoProvider
	}
	return nil, errors.Join(errs...)
}

func (f *fallback) Chat(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	if len(f.providers) == 0 {
		return Response{}, ErrNoProvider
	}
	var errs []error
	for _, p := range f.providers {
		streamed := false
		var cb func(Delta)
		if onDelta != nil {
			cb = func(d Delta) {
				streamed = true
				onDelta(d)
			}
		}
		resp, err := p.Chat(ctx, req, cb)
		if err == nil {
			if resp.Provider == "" {
				resp.Provider = p.Name()
			}
			return resp, nil
		}
		if !strings.Contains(err.Error(), "provider "+p.Name()) {
			err = fmt.Errorf("provider %s: %w", p.Name(), err)
		}
		if ctx.Err() != nil || streamed {
			return Response{}, err
		}
		errs = append(errs, err)
	}
	if len(errs) == 1 {
		return Response{}, errs[0]
	}
	return Response{}, fmt.Errorf("all %d providers failed: %w", len(errs), errors.Join(errs...))
}
