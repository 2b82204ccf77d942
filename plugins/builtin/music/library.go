package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/hologramagent/hologram/plugins/builtin/internal/jsonfile"
)

// audioExt are the file types indexed (those MPD and the common players play).
var audioExt = map[string]bool{".flac": true, ".mp3": true, ".ogg": true, ".oga": true, ".opus": true,
	".m4a": true, ".aac": true, ".wav": true, ".wma": true, ".ape": true, ".wv": true, ".mpc": true}

// track is one file of the library.
type track struct {
	Path   string `json:"path"` // relative to the library folder, with /
	Title  string `json:"title,omitempty"`
	Artist string `json:"artist,omitempty"`
	Album  string `json:"album,omitempty"`
	Track  int    `json:"track,omitempty"`
	Size   int64  `json:"size"`
	MTime  int64  `json:"mtime"` // modification time, Unix nanoseconds

	abs string // the absolute path (not stored)
}

// indexDoc is library.json.
type indexDoc struct {
	Version int     `json:"version"`
	Root    string  `json:"root"`
	Tracks  []track `json:"tracks"`
}

// rescanAfter is how old the index may be when a search or play starts before the folder is
// scanned again (a walk that stats every file, reading the tags only of new and changed ones).
const rescanAfter = 2 * time.Second

// library is the index of the owner's music folder, kept in <data dir>/music/library.json. It
// is safe for concurrent use.
type library struct {
	root string
	file *jsonfile.File
	log  *slog.Logger
	now  func() time.Time

	mu      sync.Mutex
	tracks  map[string]track
	scanned time.Time
	scanErr error
}

// openLibrary loads the index of root kept in dir (a fresh one when the file is missing or
// indexes another folder).
func openLibrary(log *slog.Logger, root, dir string, now func() time.Time) (*library, error) {
	f, err := jsonfile.Open(dir, "library.json", jsonfile.Spec{Plugin: "music", What: "the music library's index", Version: 1})
	if err != nil {
		return nil, err
	}
	l := &library{root: root, file: f, log: log, now: now, tracks: map[string]track{}}
	var doc indexDoc
	found, err := f.Load(&doc)
	if err != nil {
		log.Warn("the library's index is unreadable: indexing anew", "err", err)
	} else if found && doc.Root == root {
		for _, t := range doc.Tracks {
			l.tracks[t.Path] = t
		}
	}
	return l, nil
}

// refresh scans the folder when the index is older than rescanAfter (force: always): files
// whose size and modification time are unchanged keep their entry, new and changed ones have
// their tags read, and vanished ones leave. The index file is rewritten when anything changed.
func (l *library) refresh(ctx context.Context, force bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !force && !l.scanned.IsZero() && l.now().Sub(l.scanned) < rescanAfter {
		return l.scanErr
	}
	start := l.now()
	seen := map[string]bool{}
	added, changed := 0, 0
	err := filepath.WalkDir(l.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == l.root {
				return err
			}
			return nil // an unreadable subfolder is skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != l.root {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || !audioExt[strings.ToLower(filepath.Ext(path))] {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(l.root, path)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		old, had := l.tracks[rel]
		if had && old.Size == fi.Size() && old.MTime == fi.ModTime().UnixNano() {
			return nil
		}
		t := track{Path: rel, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
		tg, err := readTags(path)
		if err != nil {
			l.log.Debug("tags unreadable", "file", rel, "err", err)
		}
		fromPath := pathTags(rel)
		t.Title, t.Artist, t.Album, t.Track = cmp.Or(tg.Title, fromPath.Title), cmp.Or(tg.Artist, fromPath.Artist),
			cmp.Or(tg.Album, fromPath.Album), cmp.Or(tg.Track, fromPath.Track)
		l.tracks[rel] = t
		if had {
			changed++
		} else {
			added++
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("the music folder %s does not exist (set XDG_MUSIC_DIR, or XDG_MUSIC_DIR in ~/.config/user-dirs.dirs)", l.root)
		} else {
			err = fmt.Errorf("scanning the music folder %s: %w", l.root, err)
		}
		l.scanned, l.scanErr = l.now(), err
		return err
	}
	removed := 0
	for p := range l.tracks {
		if !seen[p] {
			delete(l.tracks, p)
			removed++
		}
	}
	l.scanned, l.scanErr = l.now(), nil
	if added+changed+removed == 0 {
		return nil
	}
	l.log.Info("music library indexed", "folder", l.root, "tracks", len(l.tracks), "added", added, "changed", changed,
		"removed", removed, "took", l.now().Sub(start).Round(time.Millisecond).String())
	doc := indexDoc{Version: 1, Root: l.root, Tracks: l.sortedLocked()}
	if err := l.file.Save(doc); err != nil {
		l.log.Warn("the library's index is not saved", "err", err)
	}
	return nil
}

// sortedLocked returns the tracks by artist, album, track number and path.
func (l *library) sortedLocked() []track {
	out := make([]track, 0, len(l.tracks))
	for _, t := range l.tracks {
		t.abs = filepath.Join(l.root, filepath.FromSlash(t.Path))
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b track) int {
		return cmp.Or(cmp.Compare(fold(a.Artist), fold(b.Artist)), cmp.Compare(fold(a.Album), fold(b.Album)),
			cmp.Compare(a.Track, b.Track), cmp.Compare(a.Path, b.Path))
	})
	return out
}

// size returns how many tracks the index holds.
func (l *library) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tracks)
}

// fillers are the words of "play something by X" that name no track.
var fillers = map[string]bool{"something": true, "anything": true, "some": true, "music": true, "songs": true,
	"song": true, "tracks": true, "track": true, "a": true, "any": true}

// search returns the tracks matching query, in [library.sortedLocked] order. Every word of the
// query must occur in the track's title, artist, album or path; "T by A" (or "something by
// A") asks for the artist A (and T in the title or album). An empty query matches nothing.
func (l *library) search(query string) []track {
	what, by, hasBy := cutWord(query, "by")
	l.mu.Lock()
	all := l.sortedLocked()
	l.mu.Unlock()
	var out []track
	match := func(t track, words []string, fields ...string) bool {
		hay := fold(strings.Join(fields, "\x00"))
		for _, w := range words {
			if !strings.Contains(hay, w) {
				return false
			}
		}
		return true
	}
	if hasBy {
		tw, aw := words(what, true), words(by, false)
		if len(aw) > 0 {
			for _, t := range all {
				if match(t, aw, t.Artist) && match(t, tw, t.Title, t.Album) {
					out = append(out, t)
				}
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	qw := words(query, false)
	if len(qw) == 0 {
		return nil
	}
	for _, t := range all {
		if match(t, qw, t.Title, t.Artist, t.Album, t.Path) {
			out = append(out, t)
		}
	}
	return out
}

// cutWord splits s around the first standalone word w ("Song by Artist" → "Song", "Artist").
func cutWord(s, w string) (before, after string, found bool) {
	f := strings.Fields(s)
	for i, x := range f {
		if strings.EqualFold(x, w) && i < len(f)-1 {
			return strings.Join(f[:i], " "), strings.Join(f[i+1:], " "), true
		}
	}
	return s, "", false
}

// words returns the folded words of s, without the fillers when dropFillers is set.
func words(s string, dropFillers bool) []string {
	var out []string
	for _, w := range strings.FieldsFunc(fold(s), func(r rune) bool { return unicode.IsSpace(r) || r == ',' }) {
		if dropFillers && fillers[w] {
			continue
		}
		out = append(out, w)
	}
	return out
}

// fold lowercases s for matching.
func fold(s string) string { return strings.ToLower(s) }

// watch rescans the folder every interval until ctx ends, so the index follows files added
// while nobody asks.
func (l *library) watch(ctx context.Context, interval time.Duration) {
	if err := l.refresh(ctx, true); err != nil {
		l.log.Warn("music library", "err", err)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_ = l.refresh(ctx, true) // a failure is kept for the next call to report
		}
	}
}

// describe says what the library holds, for music_status.
func (l *library) describe() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.scanErr != nil {
		return "library: " + l.scanErr.Error()
	}
	if _, err := os.Stat(l.root); err != nil {
		return fmt.Sprintf("library: %s is not readable (%v)", l.root, err)
	}
	return fmt.Sprintf("library: %s, %d tracks", l.root, len(l.tracks))
}
