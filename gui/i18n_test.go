package gui

import (
	"encoding/json"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// uiText is a text passed to T or Tf, and where.
type uiText struct {
	text string
	pos  string
}

// collectUITexts parses every non-test .go file in dir and returns the constant strings passed
// as the first argument to T and Tf (literals, concatenations of them, and named string
// constants), and the positions of calls whose first argument is not constant.
func collectUITexts(t *testing.T, dir string) (texts []uiText, dynamic []string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		parsed = append(parsed, f)
	}
	// Package-level string constants, so T(someConst) is checked too.
	consts := map[string]string{}
	for _, f := range parsed {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if v, ok := constString(vs.Values[i], nil); ok {
							consts[n.Name] = v
						}
					}
				}
			}
		}
	}
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if !ok || (id.Name != "T" && id.Name != "Tf") {
				return true
			}
			pos := fset.Position(call.Pos())
			where := filepath.Base(pos.Filename) + ":" + strconv.Itoa(pos.Line)
			if s, ok := constString(call.Args[0], consts); ok {
				texts = append(texts, uiText{s, where})
			} else {
				dynamic = append(dynamic, where)
			}
			return true
		})
	}
	return texts, dynamic
}

// constString evaluates a string literal, a named constant or a + of them.
func constString(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		v := constant.MakeFromLiteral(e.Value, e.Kind, 0)
		return constant.StringVal(v), v.Kind() == constant.String
	case *ast.ParenExpr:
		return constString(e.X, consts)
	case *ast.Ident:
		s, ok := consts[e.Name]
		return s, ok
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		a, ok1 := constString(e.X, consts)
		b, ok2 := constString(e.Y, consts)
		return a + b, ok1 && ok2
	}
	return "", false
}

// verbRe finds fmt verbs (with flags, width, precision and an explicit index).
var verbRe = regexp.MustCompile(`%(?:\[\d+\])?[-+# 0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[a-zA-Z%]`)

// verbs returns the kinds of fmt verbs in s, sorted (a translation may reorder arguments).
func verbs(s string) []string {
	var out []string
	for _, v := range verbRe.FindAllString(s, -1) {
		if v == "%%" {
			continue
		}
		out = append(out, v[len(v)-1:])
	}
	sort.Strings(out)
	return out
}

// TestTranslations checks that every text the UI passes to T or Tf has a Simplified Chinese
// translation with the same fmt verbs, and that every translation is still used.
func TestTranslations(t *testing.T) {
	texts, _ := collectUITexts(t, ".")
	if len(texts) < 50 {
		t.Fatalf("found only %d texts in T/Tf calls: is the parser missing them?", len(texts))
	}
	if err := SetLanguage("zh"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = SetLanguage("en") })
	i18n.mu.RLock()
	table := make(map[string]string, len(i18n.table))
	for k, v := range i18n.table {
		table[k] = v
	}
	i18n.mu.RUnlock()

	used := map[string]bool{}
	var missing []string
	for _, x := range texts {
		if used[x.text] {
			continue
		}
		used[x.text] = true
		zh, ok := table[x.text]
		switch {
		case !ok || strings.TrimSpace(zh) == "":
			missing = append(missing, x.pos+": "+strconv.Quote(x.text))
		case !slices.Equal(verbs(x.text), verbs(zh)):
			t.Errorf("%s: translation of %q has verbs %v, the text %v: %q", x.pos, x.text, verbs(zh), verbs(x.text), zh)
		case T(x.text) != zh:
			t.Errorf("T(%q) = %q with zh on, want %q", x.text, T(x.text), zh)
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("no zh translation for %s", m)
	}

	// Stale entries, named with the file that holds them.
	files, err := fs.Glob(i18nFS, path.Join("i18n", "zh", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	type seenAt struct{ file, zh string }
	first := map[string]seenAt{} // where each key was first translated
	for _, f := range files {
		b, err := i18nFS.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range jsonEntries(t, f, b) {
			k, v := kv[0], kv[1]
			if !used[k] {
				stale = append(stale, path.Base(f)+": "+strconv.Quote(k))
			}
			if prev, ok := first[k]; !ok {
				first[k] = seenAt{path.Base(f), v}
			} else if prev.zh != v {
				t.Errorf("%q is translated differently in %s (%q) and %s (%q)", k, prev.file, prev.zh, path.Base(f), v)
			}
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Errorf("stale zh translation (no T/Tf call uses it): %s", s)
	}
}

// jsonEntries returns the key-value pairs of a translation file in order, failing on a key
// given twice (which encoding/json would silently merge).
func jsonEntries(t *testing.T, name string, b []byte) [][2]string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not a JSON object", name)
	}
	var out [][2]string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		k := tok.(string)
		if seen[k] {
			t.Errorf("%s: key %q given twice", name, k)
		}
		seen[k] = true
		var v string
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: value of %q: %v", name, k, err)
		}
		out = append(out, [2]string{k, v})
	}
	return out
}

// TestCollectUITexts checks the collector on a small package of its own.
func TestCollectUITexts(t *testing.T) {
	dir := t.TempDir()
	src := "package gui\n" +
		"const greeting = \"Hello\"\n" +
		"func f(x string) {\n" +
		"\t_ = T(\"Plain\")\n" +
		"\t_ = Tf(`Raw %d`, 1)\n" +
		"\t_ = T(\"Two \" + \"parts\")\n" +
		"\t_ = T(greeting)\n" +
		"\t_ = T(x)\n" +
		"\t_ = other(\"Not UI\")\n" +
		"}\n"
	for name, text := range map[string]string{
		"a.go":      src,
		"a_test.go": "package gui\nfunc g() { _ = T(\"Only in a test\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	texts, dynamic := collectUITexts(t, dir)
	var got []string
	for _, x := range texts {
		got = append(got, x.text)
	}
	want := []string{"Plain", "Raw %d", "Two parts", "Hello"}
	if !slices.Equal(got, want) {
		t.Errorf("texts = %q, want %q", got, want)
	}
	if !slices.Equal(dynamic, []string{"a.go:8"}) {
		t.Errorf("dynamic = %q, want [a.go:8]", dynamic)
	}
	if v := verbs("%[2]s has %d%% of %-5.2f"); !slices.Equal(v, []string{"d", "f", "s"}) {
		t.Errorf("verbs = %q", v)
	}
}
