package function

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFunctionsSeeNoStructpb holds the functions (non-test files under
// functions/) to the typed API of Request and Plan: none imports structpb.
func TestFunctionsSeeNoStructpb(t *testing.T) {
	banned := map[string]bool{
		"google.golang.org/protobuf/types/known/structpb": true,
	}
	checked := 0
	err := filepath.WalkDir(filepath.Join("..", "..", "functions"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); banned[p] {
				t.Errorf("%s imports %s; read through function.Request, write through function.Plan", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: wrong root?", checked)
	}
}
