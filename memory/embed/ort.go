package embed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// ORTLibraryName is the file name of the ONNX Runtime shared library that
// [ResolveORTLibrary] looks for (`make onnxruntime` extracts it from the npm package
// onnxruntime-node; packages install it under /usr/lib/hologram/onnxruntime).
const ORTLibraryName = "libonnxruntime.so.1"

// ORTLibraryEnv names the environment variable that points at the ONNX Runtime library (the
// file itself or the directory holding [ORTLibraryName]).
const ORTLibraryEnv = "HOLOGRAM_ONNXRUNTIME"

// ORTMinVersion is the oldest ONNX Runtime that github.com/yalue/onnxruntime_go v1.27.0
// works with: it asks the library for C API version 24.
const ORTMinVersion = "1.24"

// ErrORTNotFound is wrapped by the errors of [ResolveORTLibrary] and [ORT.Load] when the
// library file is missing.
var ErrORTNotFound = errors.New("ONNX Runtime library not found")

// systemORTDir is where the packages install the library; a variable so tests can move it.
var systemORTDir = "/usr/lib/hologram/onnxruntime"

// ortAsset describes the ONNX Runtime directory for [AssetDir.Resolve].
func ortAsset() AssetDir {
	return AssetDir{
		What:     "ONNX Runtime",
		Env:      ORTLibraryEnv,
		System:   systemORTDir,
		Sub:      "onnxruntime",
		Checkout: "build/onnxruntime",
		Make:     "onnxruntime",
		Files:    []string{ORTLibraryName},
		NotFound: ErrORTNotFound,
		hint:     "set " + ORTLibraryEnv + " to " + ORTLibraryName + " or a directory holding it",
	}
}

// ResolveORTLibrary returns the path of libonnxruntime.so.1.
//
// An explicit setting is authoritative and is the only place tried: configured if not "",
// else $HOLOGRAM_ONNXRUNTIME (read with getenv; nil reads nothing) if set. It may name the
// library file itself (any file name) or a directory holding libonnxruntime.so.1. Without
// one, the places are, in order:
//
//  1. /usr/lib/hologram/onnxruntime (the packages install it there);
//  2. <dir of exe>/onnxruntime, then <dir of exe>/../lib/hologram/onnxruntime (exe "" skips both);
//  3. build/onnxruntime in the checkout of this module, found upward from exe's directory, then
//     from the working directory (`make onnxruntime`).
//
// The error wraps [ErrORTNotFound], lists every place tried, and says how to fix it.
// ResolveORTLibrary checks only that the file exists; [ORT.Load] checks that it is a usable
// ONNX Runtime. It is safe for concurrent use.
func ResolveORTLibrary(configured string, getenv func(string) string, exe string) (string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	explicit := configured
	if explicit == "" {
		explicit = getenv(ORTLibraryEnv)
	}
	if explicit != "" {
		if fi, err := os.Stat(explicit); err == nil && fi.Mode().IsRegular() {
			return filepath.Clean(explicit), nil
		}
	}
	dir, err := ortAsset().Resolve(configured, getenv, exe)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, ORTLibraryName), nil
}

// ORT is the process-wide ONNX Runtime. [ORT.Load] initialises it once (later calls return
// the first result); [ORT.Threads] is the intra-op thread count of every session created with
// [ORT.SessionOptions].
//
// ONNX Runtime is global to a process (github.com/yalue/onnxruntime_go keeps one environment):
// several ORT values may load the same library file, but once one library is loaded, loading a
// different file fails. A failed load leaves nothing behind, so another ORT may try again. The
// environment is never torn down: sessions may outlive any one user. An ORT is safe for
// concurrent use.
type ORT struct {
	libPath string
	threads int

	once   sync.Once
	loaded atomic.Bool
	err    error
	took   time.Duration
}

// NewORT returns an ORT for the library at libPath (see [ResolveORTLibrary]) whose sessions
// use threads intra-op threads; threads ≤ 0 selects min(runtime.NumCPU(), 4). It loads nothing.
func NewORT(libPath string, threads int) *ORT {
	if threads <= 0 {
		threads = min(runtime.NumCPU(), 4)
	}
	return &ORT{libPath: libPath, threads: threads}
}

// Path returns the library path NewORT was given.
func (o *ORT) Path() string { return o.libPath }

// Threads returns the intra-op thread count of the sessions (see [ORT.SessionOptions]).
func (o *ORT) Threads() int { return o.threads }

// Loaded reports whether [ORT.Load] succeeded.
func (o *ORT) Loaded() bool { return o.loaded.Load() }

// Load loads the library and initialises the ONNX Runtime environment, the first time it is
// called (≈ 20–50 ms; the kernel runs it lazily, as a warm-up facility). Later calls return the
// first result at once. The error says what is wrong: a missing file (wraps [ErrORTNotFound]),
// a file that is not a shared library or not ONNX Runtime, an ONNX Runtime older than
// [ORTMinVersion], or a different library already loaded in the process.
func (o *ORT) Load() error {
	o.once.Do(func() {
		start := time.Now()
		o.err = loadORT(o.libPath)
		o.took = time.Since(start)
		o.loaded.Store(o.err == nil)
	})
	return o.err
}

// LoadDuration returns how long [ORT.Load] took (0 before it ran).
func (o *ORT) LoadDuration() time.Duration {
	if !o.Loaded() {
		return 0
	}
	return o.took
}

// Version returns the loaded ONNX Runtime's version, e.g. "1.24.3", or "" before a successful
// [ORT.Load].
func (o *ORT) Version() string {
	if !o.Loaded() {
		return ""
	}
	return ort.GetVersion()
}

// SessionOptions loads the runtime if needed and returns new session options with
// [ORT.Threads] intra-op threads and one inter-op thread (operators run one after another;
// left unset, ONNX Runtime would size its pools to every core), whose idle threads sleep
// rather than spin. The caller destroys them once its sessions are created.
func (o *ORT) SessionOptions() (*ort.SessionOptions, error) {
	if err := o.Load(); err != nil {
		return nil, err
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnxruntime session options: %w", err)
	}
	if err := opts.SetIntraOpNumThreads(o.threads); err != nil {
		opts.Destroy()
		return nil, fmt.Errorf("onnxruntime intra-op threads %d: %w", o.threads, err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		opts.Destroy()
		return nil, fmt.Errorf("onnxruntime inter-op threads: %w", err)
	}
	// Idle pool threads sleep instead of spinning: the agent shares the machine with its
	// owner's work, and spinning threads burn a core each between runs.
	if err := opts.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
		opts.Destroy()
		return nil, fmt.Errorf("onnxruntime spinning: %w", err)
	}
	return opts, nil
}

// ortProcess is the library the process's ONNX Runtime environment was initialised from.
var ortProcess struct {
	mu   sync.Mutex
	path string
	fi   os.FileInfo
}

// loadORT initialises the process's ONNX Runtime from path, or checks that path is the
// library already loaded.
func loadORT(path string) error {
	if path == "" {
		return fmt.Errorf("%w: no library path given (see embed.ResolveORTLibrary); run `make onnxruntime` or set %s",
			ErrORTNotFound, ORTLibraryEnv)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %s does not exist; run `make onnxruntime` in the source checkout or set %s",
			ErrORTNotFound, path, ORTLibraryEnv)
	case err != nil:
		return fmt.Errorf("load ONNX Runtime: %w", err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("load ONNX Runtime: %s is not a regular file", path)
	}

	ortProcess.mu.Lock()
	defer ortProcess.mu.Unlock()
	if ortProcess.path != "" {
		if os.SameFile(ortProcess.fi, fi) {
			return nil
		}
		return fmt.Errorf("load ONNX Runtime %s: this process already runs ONNX Runtime from %s, and one process holds only one",
			path, ortProcess.path)
	}
	if ort.IsInitialized() {
		return fmt.Errorf("load ONNX Runtime %s: the runtime was initialised outside embed.ORT", path)
	}
	ort.SetSharedLibraryPath(path)
	if err := ort.InitializeEnvironment(); err != nil {
		return explainORTError(path, err)
	}
	if err := ort.DisableTelemetry(); err != nil {
		// Telemetry exists only in Windows builds; a failure here is not fatal on Linux, but
		// a runtime that cannot even do this is not one to keep.
		ort.DestroyEnvironment()
		return fmt.Errorf("load ONNX Runtime %s: disable telemetry: %w", path, err)
	}
	ortProcess.path, ortProcess.fi = path, fi
	return nil
}

// explainORTError turns onnxruntime_go's initialisation error into one that says what is
// wrong with the file.
func explainORTError(path string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Error setting ORT API base: 2"):
		// The library answered OrtGetApiBase but not C API 24; it did report its version.
		return fmt.Errorf("load ONNX Runtime %s: it is ONNX Runtime %s, older than the %s this build needs (C API 24); run `make onnxruntime` or point %s at a newer library",
			path, ort.GetVersion(), ORTMinVersion, ORTLibraryEnv)
	case strings.Contains(msg, "OrtGetApiBase"):
		return fmt.Errorf("load ONNX Runtime %s: the file is a shared library but not ONNX Runtime (it exports no OrtGetApiBase)", path)
	case strings.Contains(msg, "Error loading ONNX shared library"):
		return fmt.Errorf("load ONNX Runtime %s: not a loadable shared library for this system (%v); run `make onnxruntime`", path, err)
	}
	return fmt.Errorf("load ONNX Runtime %s: %w", path, err)
}
