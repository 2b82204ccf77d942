package kernel_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bounds of the kernel root package (ARCHITECTURE.md §2: the kernel wires the subsystems; the
// memory engine lives in memory/engine, the roles are small adapters in roles.go).
const (
	maxKernelMethods = 40
	maxRootLines     = 4000
)

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) (*token.FileSet, []*ast.File, int) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	lines := 0
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(src, []byte("\n"))
		f, err := parser.ParseFile(fset, n, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files, lines
}

// TestKernelIsWiring: *Kernel has at most 40 methods and embeds nothing, the root package stays
// under 4,000 lines, and neither it nor the memory engine finds a capability by a type
// assertion (a store or model that lacks one must fail to compile or fail kernel.New).
func TestKernelIsWiring(t *testing.T) {
	fset, files, lines := parseDir(t, ".")
	if lines > maxRootLines {
		t.Errorf("the kernel root package has %d non-test lines, more than %d: move logic to the room that owns its data", lines, maxRootLines)
	}
	var methods []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Recv != nil && len(n.Recv.List) == 1 {
					typ := n.Recv.List[0].Type
					if st, ok := typ.(*ast.StarExpr); ok {
						typ = st.X
					}
					if id, ok := typ.(*ast.Ident); ok && id.Name == "Kernel" {
						methods = append(methods, n.Name.Name)
					}
				}
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok && n.Name.Name == "Kernel" {
					for _, fld := range st.Fields.List {
						if len(fld.Names) == 0 {
							t.Errorf("%s: the Kernel struct embeds %s", fset.Position(fld.Pos()), exprString(fld.Type))
						}
					}
				}
			}
			return true
		})
	}
	if len(methods) > maxKernelMethods {
		t.Errorf("*Kernel has %d methods, more than %d: %v", len(methods), maxKernelMethods, methods)
	}
	for _, dir := range []string{".", filepath.Join("..", "memory", "engine")} {
		fset, files, _ := parseDir(t, dir)
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				ta, ok := n.(*ast.TypeAssertExpr)
				if !ok || ta.Type == nil {
					return true
				}
				// Asserting to an interface finds a capability; a concrete value from a map or
				// a sync.Map is no capability.
				switch ty := ta.Type.(type) {
				case *ast.InterfaceType:
					t.Errorf("%s: a type assertion to an interface", fset.Position(ta.Pos()))
				case *ast.SelectorExpr:
					t.Errorf("%s: a type assertion to %s.%s (ask for the interface where the value is built)", fset.Position(ta.Pos()), exprString(ty.X), ty.Sel.Name)
				}
				return true
			})
		}
	}
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return "?"
}
