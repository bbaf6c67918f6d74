package answer

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// handWritten lists where src answers or reads JSON by hand: a JSON
// encoder on an http.ResponseWriter, or a JSON decoder (or Unmarshal) fed
// from a request's Body. Only this package may do either; every other
// HTTP surface goes through JSON and Body.Decode, so that the rules
// (limits, 413, 415, strictness, the error shapes) are the same
// everywhere.
func handWritten(fset *token.FileSet, f *ast.File) []string {
	var found []string
	check := func(params *ast.FieldList, body *ast.BlockStmt) {
		if params == nil || body == nil {
			return
		}
		writers, requests := map[string]bool{}, map[string]bool{}
		for _, p := range params.List {
			t := types(p.Type)
			for _, n := range p.Names {
				switch t {
				case "http.ResponseWriter":
					writers[n.Name] = true
				case "*http.Request":
					requests[n.Name] = true
				}
			}
		}
		ast.Inspect(body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fn := types(call.Fun); fn {
			case "json.NewEncoder":
				if id, ok := call.Args[0].(*ast.Ident); ok && writers[id.Name] {
					found = append(found, fset.Position(call.Pos()).String()+": JSON written by hand")
				}
			case "json.NewDecoder", "json.Unmarshal":
				if readsBody(call.Args[0], requests) {
					found = append(found, fset.Position(call.Pos()).String()+": a request body decoded by hand")
				}
			}
			return true
		})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch fn := n.(type) {
		case *ast.FuncDecl:
			check(fn.Type.Params, fn.Body)
		case *ast.FuncLit:
			check(fn.Type.Params, fn.Body)
		}
		return true
	})
	return found
}

// types spells a type or function expression as written: "http.Request",
// "*http.Request", "json.NewEncoder".
func types(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return "*" + types(t.X)
	case *ast.SelectorExpr:
		return types(t.X) + "." + t.Sel.Name
	}
	return ""
}

// readsBody reports whether e reaches the Body of one of the requests,
// however wrapped (io.LimitReader(r.Body, n), io.ReadAll(r.Body)).
func readsBody(e ast.Expr, requests map[string]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Body" {
			if id, ok := sel.X.(*ast.Ident); ok && requests[id.Name] {
				found = true
			}
		}
		return !found
	})
	return found
}

// TestOneWriterOneDecoder walks every Go file of the services and tools
// (tests aside) and fails on JSON answered or a body decoded outside this
// package.
func TestOneWriterOneDecoder(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	here, _ := filepath.Abs(".")
	fset := token.NewFileSet()
	files := 0
	for _, dir := range []string{"services", "tools"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "node_modules" || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == here {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files++
			for _, v := range handWritten(fset, f) {
				t.Error(v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 100 {
		t.Fatalf("read %d files: the walk missed the tree", files)
	}
}

// The check finds what it is for: each way of answering or reading JSON
// by hand, and not a decoder of a file's bytes.
func TestHandWrittenIsFound(t *testing.T) {
	const src = `package p
func a(w http.ResponseWriter, r *http.Request) { _ = json.NewEncoder(w).Encode(1) }
func b(w http.ResponseWriter, req *http.Request) { _ = json.NewDecoder(io.LimitReader(req.Body, 10)).Decode(nil) }
var c = func(w http.ResponseWriter, r *http.Request) { data, _ := io.ReadAll(r.Body); _ = json.Unmarshal(data, nil); _ = json.Unmarshal(must(io.ReadAll(r.Body)), nil) }
func d(data []byte) { _ = json.NewDecoder(bytes.NewReader(data)).Decode(nil) }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := handWritten(fset, f)
	want := []string{"p.go:2:54: JSON written by hand", "p.go:3:56: a request body decoded by hand", "p.go:4:122: a request body decoded by hand"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
