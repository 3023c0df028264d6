package main

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tenantkube/tenantkube/internal/fntest"
)

// FuzzStatusTextFromObserved: whatever reason and message a HelmRelease's
// Ready condition holds (helm-controller writes them, quoting the tenant's
// API server), status.addons.<release>.message is one of the fixed
// messages or a reason Flux's API defines, and the AddonsReady message is
// "<release>: <one of those>" joined by "; "; no other text of the
// condition appears in the status, a condition or a result.
func FuzzStatusTextFromObserved(f *testing.F) {
	f.Add("False", "InstallFailed", "Helm install failed: admission webhook denied: URGENT rotate creds")
	f.Add("Unknown", "URGENT_rotate_creds", "see https://evil.example")
	f.Add("True", "InstallSucceeded", "ok")
	f.Add("False", "", "")
	closed := map[string]bool{msgNotObserved: true, msgNoCondition: true, msgNotReady: true}
	for r := range fluxReasons {
		closed[r] = true
	}
	f.Fuzz(func(t *testing.T, status, reason, message string) {
		if !utf8.ValidString(status + reason + message) {
			return // no Struct holds it
		}
		cond := map[string]any{"type": "Ready", "status": status, "reason": reason, "message": message, "lastTransitionTime": "2026-01-01T00:00:00Z"}
		y, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{cond}}})
		if err != nil {
			t.Fatal(err)
		}
		observed := map[string]string{"addon-velero": string(y), "addon-cilium": string(y)}
		rsp := fntest.Call{Spec: "addons: {velero: {enabled: true}}", Observed: observed}.Run(t, (&Function{}).RunFunction)
		for _, s := range fntest.StatusStrings(rsp) {
			switch {
			case strings.HasPrefix(s.Path, "status.addons.") && strings.HasSuffix(s.Path, ".message"):
				if !closed[s.Value] {
					t.Fatalf("%s = %q: not a fixed message nor a Flux reason", s.Path, s.Value)
				}
			case s.Path == "condition AddonsReady message":
				for _, part := range strings.Split(s.Value, "; ") {
					release, msg, ok := strings.Cut(part, ": ")
					if s.Value != "" && (!ok || strings.ContainsAny(release, " :;") || !closed[msg]) {
						t.Fatalf("%s = %q: %q is not <release>: <fixed message or Flux reason>", s.Path, s.Value, part)
					}
				}
			case strings.HasPrefix(s.Path, "status."):
				t.Fatalf("%s = %q: a status string with no rule of this test", s.Path, s.Value)
			}
			for _, o := range []string{reason, message} {
				if len(o) >= 4 && !closed[o] && strings.Contains(s.Value, o) {
					t.Fatalf("%s = %q shows the condition's text %q", s.Path, s.Value, o)
				}
			}
		}
	})
}
