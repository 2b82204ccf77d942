package embed

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yanyiwu/gojieba"
)

// GojiebaVersion is the gojieba module version whose dictionaries [ResolveJiebaDir] looks for
// in the Go module cache (it must match go.mod).
const GojiebaVersion = "v1.4.6"

// JiebaDirEnv names the environment variable that points at the jieba dictionary directory.
const JiebaDirEnv = "HOLOGRAM_JIEBA_DIR"

// JiebaDictFiles are the five files a jieba dictionary directory must hold, in the order
// gojieba.NewJieba takes them.
var JiebaDictFiles = [5]string{"jieba.dict.utf8", "hmm_model.utf8", "user.dict.utf8", "idf.utf8", "stop_words.utf8"}

// ErrJiebaDictNotFound is wrapped by the error of [ResolveJiebaDir] when no place holds the
// five dictionary files.
var ErrJiebaDictNotFound = errors.New("jieba dictionaries not found")

// Locations searched by [ResolveJiebaDir]; variables so tests can point them at temp dirs.
var (
	systemJiebaDir = "/usr/lib/hologram/jieba"
	getwd          = os.Getwd
	osGetenv       = os.Getenv
	osExecutable   = os.Executable
)

// modulePath is the module whose checkout's build/ folder (written by the make targets)
// [AssetDir.Resolve] accepts.
const modulePath = "github.com/hologramagent/hologram"

// jiebaAsset describes the jieba dictionary directory for [AssetDir.Resolve].
func jiebaAsset() AssetDir {
	return AssetDir{
		What:     "jieba dictionaries",
		Env:      JiebaDirEnv,
		System:   systemJiebaDir,
		Sub:      "jieba",
		Checkout: "build/jieba",
		Make:     "jieba-dict",
		Files:    JiebaDictFiles[:],
		NotFound: ErrJiebaDictNotFound,
		fallback: jiebaModuleCache,
	}
}

// ResolveJiebaDir returns the jieba dictionary directory. A directory counts only if it
// holds all of [JiebaDictFiles].
//
// An explicit setting is authoritative and is the only place tried: configured if not
// "", else $HOLOGRAM_JIEBA_DIR (read with getenv) if set; a wrong explicit setting is an
// error rather than silently replaced by another copy. Without one, the places are, in order:
//
//  1. /usr/lib/hologram/jieba (the packages install it there);
//  2. <dir of exe>/jieba, then <dir of exe>/../lib/hologram/jieba (exe "" skips both);
//  3. build/jieba in the checkout of this module (the directory holding its go.mod), found
//     upward from exe's directory, then from the working directory (`make jieba-dict`);
//  4. the Go module cache ($GOMODCACHE, else the first $GOPATH entry's pkg/mod, else
//     $HOME/go/pkg/mod)/github.com/yanyiwu/gojieba@v1.4.6/deps/cppjieba/dict.
//
// The error wraps [ErrJiebaDictNotFound], lists every place tried with what it lacks, and
// says how to fix it. ResolveJiebaDir only reads the file system; it is safe for concurrent use.
func ResolveJiebaDir(configured string, getenv func(string) string, exe string) (string, error) {
	return jiebaAsset().Resolve(configured, getenv, exe)
}

// jiebaModuleCache tries gojieba's own copy of the dictionaries in the Go module cache.
func jiebaModuleCache(r *dirResolver, getenv func(string) string) bool {
	modcache := getenv("GOMODCACHE")
	if modcache == "" {
		if gopath := filepath.SplitList(getenv("GOPATH")); len(gopath) > 0 && gopath[0] != "" {
			modcache = filepath.Join(gopath[0], "pkg", "mod")
		} else if home := getenv("HOME"); home != "" {
			modcache = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	if modcache == "" {
		r.tried = append(r.tried, "Go module cache: $GOMODCACHE, $GOPATH and $HOME unset")
		return false
	}
	dir := filepath.Join(modcache, "github.com", "yanyiwu", "gojieba@"+GojiebaVersion, "deps", "cppjieba", "dict")
	return r.try("Go module cache", dir)
}

// AssetDir describes a directory of run-time data files that HologramAgent does not embed
// (jieba dictionaries, the ONNX Runtime library, OCR models) and where [AssetDir.Resolve]
// looks for it. The zero value is not useful; the fields are read-only once in use.
type AssetDir struct {
	// What names the contents in errors, e.g. "OCR models".
	What string
	// Env is the environment variable holding an explicit directory, e.g. HOLOGRAM_OCR_MODELS.
	Env string
	// System is where the packages install the files, e.g. /usr/lib/hologram/models/ocr.
	System string
	// Sub is the path of the directory next to an executable: <exe dir>/Sub, then
	// <exe dir>/../lib/hologram/Sub (an unpacked tarball), e.g. "models/ocr".
	Sub string
	// Checkout is the path, relative to the root of a checkout of this module, that Make
	// fills, e.g. "build/models/ocr".
	Checkout string
	// Make is the make target that fills Checkout, e.g. "ocr-models".
	Make string
	// Files are the regular files a directory must hold to count.
	Files []string
	// NotFound is wrapped by every error of Resolve (nil: a generic "not found" error).
	NotFound error

	// fallback tries places after the checkout (jieba's Go module cache).
	fallback func(r *dirResolver, getenv func(string) string) bool
	// hint replaces the "set <Env> to …" advice of the error (ONNX Runtime: a file or a dir).
	hint string
}

// Resolve returns the directory holding every file of a.Files.
//
// An explicit setting is authoritative and is the only place tried: configured if not "",
// else the variable a.Env (read with getenv; nil reads nothing) if set. Without one, the
// places are, in order: a.System; <dir of exe>/a.Sub, then <dir of exe>/../lib/hologram/a.Sub
// (exe "" skips both); a.Checkout in the checkout of this module (the directory whose go.mod
// declares github.com/hologramagent/hologram), found upward from exe's directory, then from
// the working directory.
//
// The error wraps a.NotFound, lists every place tried with what it lacks, and says how to fix
// it (the variable to set, the make target to run). Resolve only reads the file system; it is
// safe for concurrent use.
func (a AssetDir) Resolve(configured string, getenv func(string) string, exe string) (string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	r := dirResolver{files: a.Files}
	switch env := getenv(a.Env); {
	case configured != "":
		if r.try("configured", configured) {
			return r.found, nil
		}
	case a.Env != "" && env != "":
		if r.try("$"+a.Env, env) {
			return r.found, nil
		}
	default:
		if r.tryAll(a, getenv, exe) {
			return r.found, nil
		}
	}
	return "", a.err(r.tried)
}

// err is the error of a failed Resolve.
func (a AssetDir) err(tried []string) error {
	notFound := a.NotFound
	if notFound == nil {
		notFound = fmt.Errorf("%s not found", a.What)
	}
	hint := a.hint
	if hint == "" {
		hint = fmt.Sprintf("set %s to a directory holding %s", a.Env, strings.Join(a.Files, ", "))
	}
	return fmt.Errorf("%w; tried:\n  %s\n%s, or run `make %s` in the source checkout",
		notFound, strings.Join(tried, "\n  "), hint, a.Make)
}

// dirResolver records the places [AssetDir.Resolve] tried.
type dirResolver struct {
	files []string
	tried []string
	seen  map[string]bool
	found string
}

func (r *dirResolver) tryAll(a AssetDir, getenv func(string) string, exe string) bool {
	if a.System != "" && r.try("system", a.System) {
		return true
	}
	checkout := "checkout (make " + a.Make + ")"
	if exe != "" {
		exeDir := filepath.Dir(exe)
		if r.try("next to the executable", filepath.Join(exeDir, a.Sub)) ||
			r.try("next to the executable", filepath.Join(exeDir, "..", "lib", "hologram", a.Sub)) {
			return true
		}
		if root := findModuleRoot(exeDir); root != "" && r.try(checkout, filepath.Join(root, a.Checkout)) {
			return true
		}
	}
	if wd, err := getwd(); err == nil {
		if root := findModuleRoot(wd); root != "" && r.try(checkout, filepath.Join(root, a.Checkout)) {
			return true
		}
	}
	return a.fallback != nil && a.fallback(r, getenv)
}

// try checks dir and records the outcome; it reports whether dir holds every file.
func (r *dirResolver) try(label, dir string) bool {
	dir = filepath.Clean(dir)
	if r.seen[dir] {
		return false
	}
	if r.seen == nil {
		r.seen = make(map[string]bool)
	}
	r.seen[dir] = true
	if err := checkAssetDir(dir, r.files); err != nil {
		r.tried = append(r.tried, fmt.Sprintf("%s %s: %v", label, dir, err))
		return false
	}
	r.found = dir
	return true
}

// checkJiebaDir reports which dictionary files dir lacks.
func checkJiebaDir(dir string) error { return checkAssetDir(dir, JiebaDictFiles[:]) }

// checkAssetDir reports whether dir is a directory and which of files it lacks.
func checkAssetDir(dir string, files []string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return err
	case !fi.IsDir():
		return errors.New("not a directory")
	}
	var missing []string
	for _, name := range files {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || !fi.Mode().IsRegular() {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// findModuleRoot returns the first directory upward from dir whose go.mod declares
// [modulePath], or "".
func findModuleRoot(dir string) string {
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declaresModule(data, modulePath) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func declaresModule(gomod []byte, path string) bool {
	for line := range bytes.Lines(gomod) {
		f := strings.Fields(string(line))
		if len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == path {
			return true
		}
	}
	return false
}

// jiebaSegmenter is a loaded jieba with its stop words.
type jiebaSegmenter struct {
	jb   *gojieba.Jieba
	stop map[string]struct{}
}

// loadJieba loads the dictionaries in dir. It checks the files first (gojieba panics on a
// missing file) and turns any panic into an error.
func loadJieba(log *slog.Logger, dir string) (seg *jiebaSegmenter, err error) {
	if err := checkJiebaDir(dir); err != nil {
		return nil, fmt.Errorf("%w: %s: %v; set %s or run `make jieba-dict`", ErrJiebaDictNotFound, dir, err, JiebaDirEnv)
	}
	stop, err := readStopWords(filepath.Join(dir, "stop_words.utf8"))
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, name := range JiebaDictFiles {
		paths = append(paths, filepath.Join(dir, name))
	}
	// idf.utf8 (6 MB, 350k words) feeds only jieba's keyword extractor, which the memory never
	// calls (it segments and tags): a one-word stand-in keeps ≈ 17 MB of C++ maps out of memory.
	if idf, err := os.CreateTemp("", "hologram-idf-*.utf8"); err == nil {
		_, werr := idf.WriteString("的 1.0\n")
		if cerr := idf.Close(); werr == nil && cerr == nil {
			paths[3] = idf.Name()
		}
		defer os.Remove(idf.Name())
	}
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			seg, err = nil, fmt.Errorf("load jieba from %s: %v", dir, p)
		}
	}()
	jb := gojieba.NewJieba(paths...)
	log.Info("jieba loaded", "dir", dir, "duration", time.Since(start).Round(time.Millisecond))
	return &jiebaSegmenter{jb: jb, stop: stop}, nil
}

// readStopWords reads jieba's stop word list (one word a line).
func readStopWords(path string) (map[string]struct{}, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read jieba stop words: %w", err)
	}
	defer f.Close()
	stop := make(map[string]struct{}, 2048)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if w := strings.TrimSpace(sc.Text()); w != "" {
			stop[w] = struct{}{}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read jieba stop words %s: %w", path, err)
	}
	return stop, nil
}

// maxHanRun is the longest Han run handed to jieba in one call; longer runs are cut at rune
// boundaries (a word may split at the cut).
const maxHanRun = 64 << 10

// appendTokens appends the search-mode terms of run (valid UTF-8, Han characters only) to out,
// without jieba's stop words.
func (s *jiebaSegmenter) appendTokens(out []string, run string) []string {
	for len(run) > 0 {
		piece := run
		if len(piece) > maxHanRun {
			cut := maxHanRun
			for cut > 0 && !utf8.RuneStart(run[cut]) {
				cut--
			}
			piece = run[:cut]
		}
		run = run[len(piece):]
		for _, w := range s.jb.CutForSearch(piece, true) {
			if _, stop := s.stop[w]; !stop && w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

func (s *jiebaSegmenter) free() { s.jb.Free() }
