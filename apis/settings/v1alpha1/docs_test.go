package v1alpha1

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// settingsKeys are the JSON names of Settings' fields: the keys of the
// EnvironmentConfig's data.
func settingsKeys(t *testing.T) []string {
	t.Helper()
	var keys []string
	for _, f := range reflect.VisibleFields(reflect.TypeOf(Settings{})) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			t.Fatalf("field %s has no JSON name", f.Name)
		}
		keys = append(keys, name)
	}
	slices.Sort(keys)
	return keys
}

// compareKeys fails t for each key of want missing from got and each key
// of got that is not a setting.
func compareKeys(t *testing.T, where string, got, want []string) {
	t.Helper()
	for _, k := range want {
		if !slices.Contains(got, k) {
			t.Errorf("%s: setting %s is missing", where, k)
		}
	}
	for _, k := range got {
		if !slices.Contains(want, k) {
			t.Errorf("%s: %s is not a setting", where, k)
		}
	}
}

// The settings table of docs/platform-guide.md (section "Platform
// settings", before its first subsection) lists every key once.
func TestPlatformGuideTable(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/platform-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "\n## Platform settings\n")
	if start < 0 {
		t.Fatal("docs/platform-guide.md has no Platform settings section")
	}
	section := doc[start+1:]
	if end := strings.Index(section[1:], "\n#"); end >= 0 {
		section = section[:end+1]
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ")
	var keys []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		if slices.Contains(keys, m[1]) {
			t.Errorf("platform guide: %s listed twice", m[1])
		}
		keys = append(keys, m[1])
	}
	compareKeys(t, "platform guide's settings table", keys, settingsKeys(t))
}

// examples/platform-settings.yaml names every key (the commented ones at
// their defaults), and its data, with the commented keys too, decodes
// strictly into Settings and is valid.
func TestExampleSettings(t *testing.T) {
	raw, err := os.ReadFile("../../../examples/platform-settings.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	at := slices.Index(lines, "data:")
	if at < 0 {
		t.Fatal("no data:")
	}
	key := regexp.MustCompile(`^  (?:# )?([a-zA-Z]+):(?: |$)`)
	var keys, all []string
	inBlock := false
	for _, l := range lines[at+1:] {
		m := key.FindStringSubmatch(l)
		switch {
		case m != nil:
			keys = append(keys, m[1])
			all = append(all, strings.Replace(l, "  # ", "  ", 1))
			inBlock = true
		case inBlock && strings.HasPrefix(l, "  #   "):
			all = append(all, "  "+strings.TrimPrefix(l, "  # "))
		case inBlock && strings.HasPrefix(l, "    "):
			all = append(all, l)
		default:
			inBlock = false
		}
	}
	compareKeys(t, "examples/platform-settings.yaml", keys, settingsKeys(t))
	for name, text := range map[string]string{"as written": string(raw), "with every commented key": "data:\n" + strings.Join(all, "\n")} {
		var obj struct {
			Data map[string]any `json:"data"`
		}
		if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		j, err := yaml.Marshal(obj.Data)
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(j)
		if err != nil {
			t.Fatal(err)
		}
		s := &Settings{}
		strict, err := kjson.UnmarshalStrict(js, s)
		if err != nil || len(strict) > 0 {
			t.Fatalf("%s: decoding: %v %v", name, err, strict)
		}
		s.Default()
		if errs := s.Validate(); len(errs) > 0 {
			t.Errorf("%s: %v", name, errs.ToAggregate())
		}
	}
}
