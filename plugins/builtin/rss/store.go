package main

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/jsonfile"
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
	file *jsonfile.File

	mu    sync.Mutex
	feeds map[string]*Feed
}

// OpenStore reads dir/feeds.json (creating dir, 0700, if needed); a missing file is no
// subscriptions.
func OpenStore(dir string) (*Store, error) {
	file, err := jsonfile.Open(dir, "feeds.json", jsonfile.Spec{Plugin: "rss", What: "the subscriptions", Version: fileVersion})
	if err != nil {
		return nil, err
	}
	s := &Store{file: file, feeds: map[string]*Feed{}}
	var f diskFile
	if found, err := file.Load(&f); err != nil || !found {
		return s, err
	}
	for i, fd := range f.Feeds {
		if fd == nil {
			return nil, fmt.Errorf("%s: feed %d is null", file.Path(), i+1)
		}
		u, err := ValidateURL(fd.URL)
		if err != nil {
			return nil, fmt.Errorf("%s: feed %d: %w", file.Path(), i+1, err)
		}
		if fd.Interval < minInterval || fd.Interval > maxInterval {
			return nil, fmt.Errorf("%s: feed %s: interval %s is not from %s to %s", file.Path(), fd.URL, fd.Interval, minInterval, maxInterval)
		}
		fd.URL = u.String()
		s.feeds[fd.URL] = fd
	}
	return s, nil
}

// saveLocked writes the subscriptions; s.mu is held.
func (s *Store) saveLocked() error {
	return s.file.Save(diskFile{Version: fileVersion, Feeds: s.listLocked()})
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
	return jsonfile.Put(s.feeds, f.URL, f, s.saveLocked)
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
	if err := jsonfile.Delete(s.feeds, url, s.saveLocked); err != nil {
		return nil, err
	}
	return f, nil
}
