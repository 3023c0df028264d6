package preview

import (
	"reflect"
	"sort"
	"strings"
)

// change is one changed leaf of an object: its path (segments joined by
// ".", a map key holding "." or "/" as "[key]", any list index as "[*]")
// and whether only the old object has it.
type change struct {
	Path    string
	Removed bool
}

// diff returns the leaves where new differs from old, in path order. A
// subtree only one side has is reported leaf by leaf; lists are compared
// index by index.
func diff(old, new any) []change {
	var out []change
	diffAt(old, new, "", &out)
	return out
}

func diffAt(old, new any, path string, out *[]change) {
	switch n := new.(type) {
	case map[string]any:
		o, ok := old.(map[string]any)
		if !ok {
			leaves(old, path, true, out)
			leaves(new, path, false, out)
			return
		}
		for _, k := range sortedKeys(n) {
			p := child(path, k)
			if ov, ok := o[k]; ok {
				diffAt(ov, n[k], p, out)
			} else {
				leaves(n[k], p, false, out)
			}
		}
		for _, k := range sortedKeys(o) {
			if _, ok := n[k]; !ok {
				leaves(o[k], child(path, k), true, out)
			}
		}
	case []any:
		o, ok := old.([]any)
		if !ok {
			leaves(old, path, true, out)
			leaves(new, path, false, out)
			return
		}
		p := path + "[*]"
		for i := range max(len(o), len(n)) {
			switch {
			case i >= len(o):
				leaves(n[i], p, false, out)
			case i >= len(n):
				leaves(o[i], p, true, out)
			default:
				diffAt(o[i], n[i], p, out)
			}
		}
	default:
		if old == nil && new == nil {
			return
		}
		if _, isMap := old.(map[string]any); isMap {
			leaves(old, path, true, out)
			leaves(new, path, false, out)
			return
		}
		if _, isList := old.([]any); isList {
			leaves(old, path, true, out)
			leaves(new, path, false, out)
			return
		}
		if !reflect.DeepEqual(old, new) {
			*out = append(*out, change{Path: path, Removed: new == nil})
		}
	}
}

// leaves reports every leaf of v under path (the path itself for a scalar,
// an empty map or an empty list).
func leaves(v any, path string, removed bool, out *[]change) {
	switch t := v.(type) {
	case nil:
	case map[string]any:
		if len(t) == 0 {
			*out = append(*out, change{Path: path, Removed: removed})
		}
		for _, k := range sortedKeys(t) {
			leaves(t[k], child(path, k), removed, out)
		}
	case []any:
		if len(t) == 0 {
			*out = append(*out, change{Path: path, Removed: removed})
		}
		for _, e := range t {
			leaves(e, path+"[*]", removed, out)
		}
	default:
		*out = append(*out, change{Path: path, Removed: removed})
	}
}

func child(path, key string) string {
	if strings.ContainsAny(key, "./[]") {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
