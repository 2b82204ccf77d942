package embed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// withORTPlaces points the fixed places of ResolveORTLibrary (system dir, working directory)
// at test directories for the duration of t. Tests using it must not be parallel.
func withORTPlaces(t *testing.T, system, wd string) {
	t.Helper()
	oldSystem, oldGetwd := systemORTDir, getwd
	systemORTDir = system
	getwd = func() (string, error) { return wd, nil }
	t.Cleanup(func() { systemORTDir, getwd = oldSystem, oldGetwd })
}

func TestResolveORTLibrary(t *testing.T) {
	const ourGoMod = "module github.com/hologramagent/hologram\n\ngo 1.26\n"
	lib := func(t *testing.T, path string) {
		t.Helper()
		writeFile(t, path, "\x7fELF not really")
	}
	type args struct {
		configured string
		env        map[string]string
		exe        string
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, root string) args
		want    string   // relative to root
		wantErr []string // substrings of the error; the error must wrap ErrORTNotFound
	}{
		{name: "configured file with any name", want: "opt/libonnxruntime.so.1.24.3",
			setup: func(t *testing.T, root string) args {
				lib(t, root+"/opt/libonnxruntime.so.1.24.3")
				lib(t, root+"/env/"+ORTLibraryName)
				return args{configured: root + "/opt/libonnxruntime.so.1.24.3", env: map[string]string{ORTLibraryEnv: root + "/env"}}
			}},
		{name: "configured directory", want: "conf/" + ORTLibraryName,
			setup: func(t *testing.T, root string) args {
				lib(t, root+"/conf/"+ORTLibraryName)
				return args{configured: root + "/conf"}
			}},
		{name: "configured directory without the library is an error, no fallback",
			wantErr: []string{"configured ROOT/conf: missing " + ORTLibraryName, "set " + ORTLibraryEnv + " to " + ORTLibraryName + " or a directory holding it", "make onnxruntime"},
			setup: func(t *testing.T, root string) args {
				lib(t, root+"/conf/libonnxruntime.so")
				lib(t, root+"/system/"+ORTLibraryName)
				return args{configured: root + "/conf"}
			}},
		{name: "configured path that does not exist", wantErr: []string{"configured ROOT/nope.so: does not exist"},
			setup: func(t *testing.T, root string) args {
				lib(t, root+"/system/"+ORTLibraryName)
				return args{configured: root + "/nope.so"}
			}},
		{name: "env file wins over system", want: "env/lib.so",
			setup: func(t *testing.T, root string) args {
				lib(t, root+"/env/lib.so")
				lib(t, root+"/system/"+ORTLibraryName)
				return args{env: map[string]string{ORTLibraryEnv: root + "/env/lib.so"}}
			}},
		{name: "env directory", want: "env/" + ORTLibraryName,
			setup: func(t *testing.T, root string) args {
				lib(t, root+"/env/"+ORTLibraryName)
				return args{env: map[string]string{ORTLibraryEnv: root + "/env"}}
			}},
		{name: "env that does not exist is an error", wantErr: []string{"$" + ORTLibraryEnv + " ROOT/nope: does not exist"},
			setup: func(t *testing.T, root string) args {
				lib(t, root+"/system/"+ORTLibraryName)
				return args{env: map[string]string{ORTLibraryEnv: root + "/nope"}}
			}},
		{name: "system wins over the executable's dir", want: "system/" + ORTLibraryName,
			setup: func(t *testing.T, root string) args {
				lib(t, root+"/system/"+ORTLibraryName)
				lib(t, root+"/bin/onnxruntime/"+ORTLibraryName)
				return args{exe: root + "/bin/homed"}
			}},
		{name: "next to the executable", want: "bin/onnxruntime/" + ORTLibraryName,
			setup: func(t *testing.T, root string) args {
				lib(t, root+"/bin/onnxruntime/"+ORTLibraryName)
				lib(t, root+"/lib/hologram/onnxruntime/"+ORTLibraryName)
				return args{exe: root + "/bin/homed"}
			}},
		{name: "executable's ../lib/hologram/onnxruntime", want: "lib/hologram/onnxruntime/" + ORTLibraryName,
			setup: func(t *testing.T, root string) args {
				lib(t, root+"/lib/hologram/onnxruntime/"+ORTLibraryName)
				writeFile(t, root+"/wd/go.mod", ourGoMod)
				lib(t, root+"/wd/build/onnxruntime/"+ORTLibraryName)
				return args{exe: root + "/bin/homed"}
			}},
		{name: "checkout found upward from the executable", want: "src/build/onnxruntime/" + ORTLibraryName,
			setup: func(t *testing.T, root string) args {
				writeFile(t, root+"/src/go.mod", ourGoMod)
				lib(t, root+"/src/build/onnxruntime/"+ORTLibraryName)
				writeFile(t, root+"/wd/go.mod", ourGoMod)
				lib(t, root+"/wd/build/onnxruntime/"+ORTLibraryName)
				return args{exe: root + "/src/bin/homed"}
			}},
		{name: "checkout found upward from the working directory", want: "wd/build/onnxruntime/" + ORTLibraryName,
			setup: func(t *testing.T, root string) args {
				writeFile(t, root+"/wd/go.mod", ourGoMod)
				lib(t, root+"/wd/build/onnxruntime/"+ORTLibraryName)
				return args{exe: root + "/tmp/embed.test"}
			}},
		{name: "another module's build/onnxruntime does not count",
			wantErr: []string{"system ROOT/system: does not exist"},
			setup: func(t *testing.T, root string) args {
				writeFile(t, root+"/wd/go.mod", "module example.com/other\n")
				lib(t, root+"/wd/build/onnxruntime/"+ORTLibraryName)
				return args{}
			}},
		{name: "nothing found lists every place",
			wantErr: []string{
				"system ROOT/system: does not exist",
				"next to the executable ROOT/bin/onnxruntime: missing " + ORTLibraryName,
				"next to the executable ROOT/lib/hologram/onnxruntime: does not exist",
				"checkout (make onnxruntime) ROOT/wd/build/onnxruntime: does not exist",
				"make onnxruntime",
			},
			setup: func(t *testing.T, root string) args {
				writeFile(t, root+"/wd/go.mod", ourGoMod)
				if err := os.MkdirAll(root+"/bin/onnxruntime", 0o755); err != nil {
					t.Fatal(err)
				}
				return args{exe: root + "/bin/homed"}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			withORTPlaces(t, root+"/system", root+"/wd")
			a := tt.setup(t, root)
			got, err := ResolveORTLibrary(a.configured, func(k string) string { return a.env[k] }, a.exe)
			assertResolved(t, "ResolveORTLibrary", root, got, err, ErrORTNotFound, tt.wantErr, tt.want)
		})
	}
}

func TestResolveORTLibraryNilGetenv(t *testing.T) {
	root := t.TempDir()
	withORTPlaces(t, root+"/system", root)
	writeFile(t, root+"/system/"+ORTLibraryName, "x")
	if got, err := ResolveORTLibrary("", nil, ""); err != nil || got != root+"/system/"+ORTLibraryName {
		t.Fatalf("ResolveORTLibrary = %q, %v", got, err)
	}
}

// TestAssetDirOwnError checks the error of an AssetDir without a sentinel of its own, as
// another package (memory/ocr) may declare one.
func TestAssetDirOwnError(t *testing.T) {
	root := t.TempDir()
	withORTPlaces(t, root+"/system", root)
	a := AssetDir{What: "widgets", Env: "HOLOGRAM_TEST_WIDGETS", System: root + "/none", Sub: "widgets",
		Checkout: "build/widgets", Make: "widgets", Files: []string{"w.bin"}}
	_, err := a.Resolve("", nil, root+"/bin/x")
	for _, want := range []string{"widgets not found", "system " + root + "/none: does not exist",
		"next to the executable " + root + "/bin/widgets", "set HOLOGRAM_TEST_WIDGETS to a directory holding w.bin", "make widgets"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	writeFile(t, root+"/bin/widgets/w.bin", "w")
	if got, err := a.Resolve("", nil, root+"/bin/x"); err != nil || got != root+"/bin/widgets" {
		t.Errorf("Resolve = %q, %v", got, err)
	}
}

func TestNewORTThreads(t *testing.T) {
	for _, tt := range []struct{ in, want int }{{1, 1}, {3, 3}, {0, min(runtime.NumCPU(), 4)}, {-2, min(runtime.NumCPU(), 4)}} {
		if got := NewORT("x", tt.in).Threads(); got != tt.want {
			t.Errorf("NewORT(x, %d).Threads() = %d, want %d", tt.in, got, tt.want)
		}
	}
	o := NewORT("/nonexistent/libonnxruntime.so.1", 1)
	if o.Loaded() || o.Version() != "" || o.LoadDuration() != 0 || o.Path() != "/nonexistent/libonnxruntime.so.1" {
		t.Errorf("fresh ORT: Loaded %v Version %q LoadDuration %v Path %q", o.Loaded(), o.Version(), o.LoadDuration(), o.Path())
	}
}

// requireORTLibrary returns the ONNX Runtime library of the checkout (or an installed one).
// Without it the test skips, or fails under HOLOGRAM_CI=1, saying how to get it.
func requireORTLibrary(t testing.TB) string {
	t.Helper()
	path, err := ResolveORTLibrary("", os.Getenv, "")
	if err != nil {
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatalf("ONNX Runtime library missing (run `make onnxruntime`): %v", err)
		}
		t.Skipf("ONNX Runtime library missing, run `make onnxruntime`: %v", err)
	}
	return path
}

// pinnedORTVersion reads ORT_NPM_VERSION from mk/assets.mk.
func pinnedORTVersion(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile("../../mk/assets.mk")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ORT_NPM_VERSION\s*:?=\s*(\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("mk/assets.mk sets no ORT_NPM_VERSION")
	}
	return string(m[1])
}

// ortStep is one action of the ONNX Runtime helper process: load lib with a new ORT (twice
// when Again), optionally after making lib a symlink to LinkTo, and run a session on success.
type ortStep struct {
	Lib        string `json:"lib"`
	LinkFirst  string `json:"link_first,omitempty"` // make Lib a symlink to this after the first Load
	Again      bool   `json:"again,omitempty"`      // Load a second time on the same ORT
	Threads    int    `json:"threads,omitempty"`
	RunSession bool   `json:"run,omitempty"`
}

// ortOutcome is what the helper process reports for one step.
type ortOutcome struct {
	Err       string    `json:"err"`
	NotFound  bool      `json:"not_found"`
	Err2      string    `json:"err2"` // second Load on the same ORT
	Loaded    bool      `json:"loaded"`
	Version   string    `json:"version"`
	LoadNanos int64     `json:"load_ns"`
	Output    []float32 `json:"output"`
	RunErr    string    `json:"run_err"`
	FreshErr  string    `json:"fresh_err"` // a new ORT on the same path, after LinkFirst
}

const ortHelperEnv = "HOLOGRAM_ORT_TEST_STEPS"

// TestORTHelperProcess is not a test: run by runORTHelper in a child process (ONNX Runtime is
// process-global, so each scenario gets a fresh process), it performs the steps in
// $HOLOGRAM_ORT_TEST_STEPS and prints one JSON outcome per step. Without the variable it
// returns at once.
func TestORTHelperProcess(t *testing.T) {
	spec := os.Getenv(ortHelperEnv)
	if spec == "" {
		return
	}
	var steps []ortStep
	if err := json.Unmarshal([]byte(spec), &steps); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, s := range steps {
		var out ortOutcome
		o := NewORT(s.Lib, s.Threads)
		if err := o.Load(); err != nil {
			out.Err, out.NotFound = err.Error(), errors.Is(err, ErrORTNotFound)
		}
		if s.LinkFirst != "" {
			if err := os.Symlink(s.LinkFirst, s.Lib); err != nil {
				t.Fatal(err)
			}
			if err := NewORT(s.Lib, s.Threads).Load(); err != nil {
				out.FreshErr = err.Error()
			}
		}
		if s.Again {
			if err := o.Load(); err != nil {
				out.Err2 = err.Error()
			}
		}
		out.Loaded, out.Version, out.LoadNanos = o.Loaded(), o.Version(), int64(o.LoadDuration())
		if s.RunSession && o.Loaded() {
			y, err := runSquareModel(o, []float32{1, -2, 3.5})
			if err != nil {
				out.RunErr = err.Error()
			}
			out.Output = y
		}
		if err := enc.Encode(out); err != nil {
			t.Fatal(err)
		}
	}
}

// runORTHelper runs steps in a fresh test process and returns one outcome per step.
func runORTHelper(t testing.TB, steps ...ortStep) []ortOutcome {
	t.Helper()
	spec, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestORTHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), ortHelperEnv+"="+string(spec))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper process: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr.Bytes())
	}
	var outs []ortOutcome
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		if line := sc.Bytes(); len(line) > 0 && line[0] == '{' {
			var o ortOutcome
			if err := json.Unmarshal(line, &o); err != nil {
				t.Fatalf("helper output %q: %v", line, err)
			}
			outs = append(outs, o)
		}
	}
	if len(outs) != len(steps) {
		t.Fatalf("helper reported %d outcomes for %d steps:\n%s\nstderr:\n%s", len(outs), len(steps), stdout, stderr.Bytes())
	}
	return outs
}

// runSquareModel runs a one-node ONNX model (y = x·x over a dynamic-length float vector) in a
// session built with o.SessionOptions.
func runSquareModel(o *ORT, in []float32) ([]float32, error) {
	opts, err := o.SessionOptions()
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(squareModel(), []string{"x"}, []string{"y"}, opts)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer sess.Destroy()
	x, err := ort.NewTensor(ort.NewShape(int64(len(in))), in)
	if err != nil {
		return nil, err
	}
	defer x.Destroy()
	outs := []ort.Value{nil}
	if err := sess.Run([]ort.Value{x}, outs); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	defer outs[0].Destroy()
	y, ok := outs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("output is %T", outs[0])
	}
	return append([]float32(nil), y.GetData()...), nil
}

// squareModel encodes, in ONNX protobuf, a model with one Mul node: y = x * x, x and y float
// vectors of dynamic length n (IR version 8, opset 13).
func squareModel() []byte {
	varint := func(b []byte, v uint64) []byte {
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		return append(b, byte(v))
	}
	field := func(num int, payload []byte) []byte { // length-delimited field
		b := varint(nil, uint64(num)<<3|2)
		b = varint(b, uint64(len(payload)))
		return append(b, payload...)
	}
	intField := func(num int, v uint64) []byte { return varint(varint(nil, uint64(num)<<3), v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	str := func(num int, s string) []byte { return field(num, []byte(s)) }

	// ValueInfoProto{name, type: TypeProto{tensor_type{elem_type FLOAT, shape{dim{dim_param "n"}}}}}
	vector := func(name string) []byte {
		shape := field(2, field(1, str(2, "n")))
		tensor := cat(intField(1, 1), shape)
		return cat(str(1, name), field(2, field(1, tensor)))
	}
	node := cat(str(1, "x"), str(1, "x"), str(2, "y"), str(3, "square"), str(4, "Mul"))
	graph := cat(field(1, node), str(2, "square"), field(11, vector("x")), field(12, vector("y")))
	return cat(intField(1, 8), str(2, "hologram-test"), field(7, graph), field(8, intField(2, 13)))
}

func TestORTLoadReal(t *testing.T) {
	lib := requireORTLibrary(t)
	out := runORTHelper(t, ortStep{Lib: lib, Threads: 2, Again: true, RunSession: true})[0]
	if out.Err != "" || out.Err2 != "" || !out.Loaded {
		t.Fatalf("Load(%s): %q, again %q, Loaded %v", lib, out.Err, out.Err2, out.Loaded)
	}
	if want := pinnedORTVersion(t); out.Version != want {
		t.Errorf("Version() = %q, want %q (mk/assets.mk)", out.Version, want)
	}
	if out.LoadNanos <= 0 {
		t.Errorf("LoadDuration() = %d after a load", out.LoadNanos)
	}
	if out.RunErr != "" {
		t.Fatalf("session with SessionOptions: %s", out.RunErr)
	}
	if want := []float32{1, 4, 12.25}; !slices.Equal(out.Output, want) {
		t.Errorf("x·x model output %v, want %v", out.Output, want)
	}
	t.Logf("ONNX Runtime %s loaded from %s in %v", out.Version, lib, time.Duration(out.LoadNanos))
}

// nonORTLibrary returns a shared library of the system that is not ONNX Runtime.
func nonORTLibrary(t *testing.T) string {
	t.Helper()
	for _, pattern := range []string{"/lib/*/libc.so.6", "/usr/lib/*/libc.so.6", "/lib64/libc.so.6", "/usr/lib64/libc.so.6"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[0]
		}
	}
	t.Fatal("no libc.so.6 found")
	return ""
}

func TestORTLoadErrors(t *testing.T) {
	lib := requireORTLibrary(t)
	dir := t.TempDir()
	text := filepath.Join(dir, "text.so")
	writeFile(t, text, "this is not a shared library\n")
	libcopy := filepath.Join(dir, "copy", ORTLibraryName)
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, libcopy, string(data))
	link := filepath.Join(dir, "link.so")
	if err := os.Symlink(lib, link); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing", ORTLibraryName)

	tests := []struct {
		name  string
		steps []ortStep
		check func(t *testing.T, outs []ortOutcome)
	}{
		{"missing file", []ortStep{{Lib: missing, Again: true}}, func(t *testing.T, o []ortOutcome) {
			ortWantErr(t, o[0].Err, missing+" does not exist", "make onnxruntime", ORTLibraryEnv)
			if !o[0].NotFound || o[0].Loaded || o[0].Version != "" {
				t.Errorf("missing file: NotFound %v Loaded %v Version %q", o[0].NotFound, o[0].Loaded, o[0].Version)
			}
			if o[0].Err2 != o[0].Err {
				t.Errorf("second Load = %q, want the first error", o[0].Err2)
			}
		}},
		{"empty path", []ortStep{{Lib: ""}}, func(t *testing.T, o []ortOutcome) {
			ortWantErr(t, o[0].Err, "no library path given", "make onnxruntime")
		}},
		{"directory", []ortStep{{Lib: dir}}, func(t *testing.T, o []ortOutcome) {
			ortWantErr(t, o[0].Err, "not a regular file")
		}},
		{"not a shared library", []ortStep{{Lib: text}}, func(t *testing.T, o []ortOutcome) {
			ortWantErr(t, o[0].Err, text, "not a loadable shared library", "make onnxruntime")
		}},
		{"a shared library that is not ONNX Runtime", []ortStep{{Lib: nonORTLibrary(t)}}, func(t *testing.T, o []ortOutcome) {
			ortWantErr(t, o[0].Err, "not ONNX Runtime", "OrtGetApiBase")
		}},
		{"a failed load leaves nothing behind", []ortStep{{Lib: text}, {Lib: lib, RunSession: true}}, func(t *testing.T, o []ortOutcome) {
			if o[0].Err == "" || o[1].Err != "" || o[1].RunErr != "" || len(o[1].Output) != 3 {
				t.Errorf("bad then good: %+v", o)
			}
		}},
		{"the first result stays; a new ORT retries", []ortStep{{Lib: filepath.Join(dir, "later.so"), LinkFirst: lib, Again: true}}, func(t *testing.T, o []ortOutcome) {
			ortWantErr(t, o[0].Err, "does not exist")
			if o[0].Err2 != o[0].Err {
				t.Errorf("second Load after the file appeared = %q, want the first error", o[0].Err2)
			}
			if o[0].FreshErr != "" {
				t.Errorf("a new ORT on the now present library: %s", o[0].FreshErr)
			}
		}},
		{"the same library through another path is shared", []ortStep{{Lib: lib}, {Lib: link, RunSession: true}}, func(t *testing.T, o []ortOutcome) {
			if o[0].Err != "" || o[1].Err != "" || o[1].RunErr != "" {
				t.Errorf("same file twice: %+v", o)
			}
		}},
		{"a second library is refused", []ortStep{{Lib: lib}, {Lib: libcopy}}, func(t *testing.T, o []ortOutcome) {
			if o[0].Err != "" {
				t.Fatalf("first load: %s", o[0].Err)
			}
			ortWantErr(t, o[1].Err, libcopy, "already runs ONNX Runtime from "+lib)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs := runORTHelper(t, tt.steps...)
			for _, o := range outs {
				if o.Err != "" {
					t.Logf("error: %s", o.Err)
				}
			}
			tt.check(t, outs)
		})
	}
}

func ortWantErr(t *testing.T, got string, want ...string) {
	t.Helper()
	if got == "" {
		t.Errorf("no error; want one containing %q", want)
		return
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("error lacks %q:\n%s", w, got)
		}
	}
}

// BenchmarkORTLoad measures ORT.Load of the real library in a fresh process per iteration
// (ONNX Runtime loads once per process). ms/load is the time inside Load (dlopen + environment);
// ns/op also counts starting the test binary.
func BenchmarkORTLoad(b *testing.B) {
	lib := requireORTLibrary(b)
	var total time.Duration
	for b.Loop() {
		out := runORTHelper(b, ortStep{Lib: lib})[0]
		if out.Err != "" {
			b.Fatal(out.Err)
		}
		total += time.Duration(out.LoadNanos)
	}
	b.ReportMetric(total.Seconds()*1000/float64(b.N), "ms/load")
}
