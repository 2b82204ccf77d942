package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"
)

// fileVersion is the version of feeds.json this plugin writes and reads.
const fileVersion = 1

// maxSeen bounds the item keys remembered per feed (the newest are kept).
const maxSeen = 2000

// ErrNotSubscribed is wrapped by the errors of operations on a feed that is not subscribed.
var ErrNotSubscribed = errors.New("not subscribed")

// Feed is one subscription and its fetch state.
type Feed struct {
	URL      string        `json:"url"`
	Title    string        `json:"title,omitempty"`
	Interval time.Duration `json:"interval"`
	Added    time.Time     `json:"added"`
	// Conditional-request validators of the last 200 response.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// LastFetch is the last attempt, LastOK the last success; NextFetch is when the scheduler
	// fetches next (zero: at once).
	LastFetch time.Time `json:"last_fetch,omitzero"`
	LastOK    time.Time `json:"last_ok,omitzero"`
	NextFetch time.Time `json:"next_fetch,omitzero"`
	// Failures counts consecutive failed fetches (the backoff); LastError is the last one's.
	Failures  int    `json:"failures,omitempty"`
	LastError string `json:"last_error,omitempty"`
	// Items counts the items stored in memory so far.
	Items int `json:"items"`
	// Seen are the keys (GUID, else link, else title and date) of the items already handled,
	// oldest first.
	Seen []string `json:"seen,omitempty"`
}

// diskFile is feeds.json.
type diskFile struct {
	Version int     `json:"version"`
	Feeds   []*Feed `json:"feeds"`
}

// Store holds the subscriptions in memory and in DIR/feeds.json, rewritten atomically after
// every change. Safe for concurrent use.
type Store struct {
	path string

	mu    sync.Mutex
	feeds map[string]*Feed
}

// OpenStore reads dir/feeds.json (creating dir, 0700, if needed); a missing file is no
// subscriptions.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("rss dir: %w", err)
	}
	s := &Store{path: filepath.Join(dir, "feeds.json"), feeds: map[string]*Feed{}}
	raw, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the subscriptions: %w", err)
	}
	var f diskFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.path, err)
	}
	if f.Version != fileVersion {
		return nil, fmt.Errorf("%s has version %d; this rss plugin reads version %d", s.path, f.Version, fileVersion)
	}
	for i, fd := range f.Feeds {
		if fd == nil {
			return nil, fmt.Errorf("%s: feed %d is null", s.path, i+1)
		}
		u, err := ValidateURL(fd.URL)
		if err != nil {
			return nil, fmt.Errorf("%s: feed %d: %w", s.path, i+1, err)
		}
		if fd.Interval < minInterval || fd.Interval > maxInterval {
			return nil, fmt.Errorf("%s: feed %s: interval %s is not from %s to %s", s.path, fd.URL, fd.Interval, minInterval, maxInterval)
		}
		fd.URL = u.String()
		s.feeds[fd.URL] = fd
	}
	return s, nil
}

// saveLocked writes the subscriptions; s.mu is held.
func (s *Store) saveLocked() error {
	f := diskFile{Version: fileVersion, Feeds: s.listLocked()}
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the subscriptions: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".feeds-*.json")
	if err != nil {
		return fmt.Errorf("saving the subscriptions: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the subscriptions: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the subscriptions: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving the subscriptions: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("saving the subscriptions: %w", err)
	}
	return nil
}

// listLocked returns the feeds by URL; s.mu is held.
func (s *Store) listLocked() []*Feed {
	out := make([]*Feed, 0, len(s.feeds))
	for _, f := range s.feeds {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}

// clone returns a copy of f that shares nothing mutable with it.
func (f *Feed) clone() *Feed {
	c := *f
	c.Seen = slices.Clone(f.Seen)
	return &c
}

// List returns copies of the feeds, by URL.
func (s *Store) List() []*Feed {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.listLocked()
	for i := range out {
		out[i] = out[i].clone()
	}
	return out
}

// Get returns a copy of the feed at url.
func (s *Store) Get(url string) (*Feed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.feeds[url]
	if !ok {
		return nil, fmt.Errorf("%w: %s (rss_list shows the subscriptions)", ErrNotSubscribed, url)
	}
	return f.clone(), nil
}

// Put adds or replaces a feed.
func (s *Store) Put(f *Feed) error {
	f = f.clone()
	if len(f.Seen) > maxSeen {
		f.Seen = f.Seen[len(f.Seen)-maxSeen:]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.feeds[f.URL]
	s.feeds[f.URL] = f
	if err := s.saveLocked(); err != nil {
		if had {
			s.feeds[f.URL] = old
		} else {
			delete(s.feeds, f.URL)
		}
		return err
	}
	return nil
}

// Update applies edit to the stored feed at url (if it is still subscribed) and saves.
func (s *Store) Update(url string, edit func(f *Feed)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.feeds[url]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotSubscribed, url)
	}
	old := f.clone()
	edit(f)
	if len(f.Seen) > maxSeen {
		f.Seen = f.Seen[len(f.Seen)-maxSeen:]
	}
	if err := s.saveLocked(); err != nil {
		s.feeds[url] = old
		return err
	}
	return nil
}

// Delete removes the feed at url.
func (s *Store) Delete(url string) (*Feed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.feeds[url]
	if !ok {
		return nil, fmt.Errorf("%w: %s (rss_list shows the subscriptions)", ErrNotSubscribed, url)
	}
	delete(s.feeds, url)
	if err := s.saveLocked(); err != nil {
		s.feeds[url] = f
		return nil, err
	}
	return f, nil
}
