//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// loopbackRetryInterval is the releaseRetryInterval the loopback
	// Composition sets (helm-controller's default is 5m).
	loopbackRetryInterval = "15s"
	// rejectValue is the value that makes the loopback charts render an
	// object the tenant API server rejects (rejectedTemplate).
	rejectValue = "e2eRejectedByTheAPIServer"
)

// rejectedTemplate renders, when the release's values set rejectValue, a
// ConfigMap whose data key the API server refuses (a key must match
// [-._a-zA-Z0-9]+), next to the values ConfigMap: the release fails at
// apply, after Helm created what the server accepted.
const rejectedTemplate = `{{- if .Values.` + rejectValue + ` }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-rejected
  namespace: {{ .Release.Namespace }}
data:
  "not a valid key!": "the tenant API server rejects this key"
{{- end }}
`

// releaseHistory is what helm-controller and Helm recorded of one release.
type releaseHistory struct {
	installFailures, upgradeFailures int64
	ready, reason, message           string
	// history is status.history as "v<version>:<status>", newest first.
	history []string
	// storage is the Helm storage Secrets as "v<version>:<status>", oldest
	// first.
	storage []string
	// events are the reasons of the HelmRelease's events.
	events []string
}

func (e *env) releaseHistory(ctx context.Context, ta *tenantAPI, rs *releaseState) (*releaseHistory, error) {
	h := &releaseHistory{}
	h.installFailures, _, _ = unstructured.NestedInt64(rs.hr.Object, "status", "installFailures")
	h.upgradeFailures, _, _ = unstructured.NestedInt64(rs.hr.Object, "status", "upgradeFailures")
	h.ready, h.reason, h.message = condition(rs.hr, "Ready")
	hist, _, _ := unstructured.NestedSlice(rs.hr.Object, "status", "history")
	for _, s := range hist {
		m, _ := s.(map[string]any)
		h.history = append(h.history, fmt.Sprintf("v%v:%v", m["version"], m["status"]))
	}
	secrets, err := helmStorage(ctx, ta, rs.storage, rs.release)
	if err != nil {
		return nil, err
	}
	sort.Slice(secrets, func(i, j int) bool {
		a, _ := strconv.Atoi(secrets[i].Labels["version"])
		b, _ := strconv.Atoi(secrets[j].Labels["version"])
		return a < b
	})
	for _, s := range secrets {
		h.storage = append(h.storage, "v"+s.Labels["version"]+":"+s.Labels["status"])
	}
	evs := &corev1.EventList{}
	if err := e.c.List(ctx, evs, client.InNamespace(rs.hr.GetNamespace())); err != nil {
		return nil, err
	}
	for _, ev := range evs.Items {
		if ev.InvolvedObject.Kind == "HelmRelease" && ev.InvolvedObject.Name == rs.hr.GetName() {
			h.events = append(h.events, ev.Reason)
		}
	}
	sort.Strings(h.events)
	return h, nil
}

// uninstalled names any sign of an uninstall in h: a Helm storage record or a
// history entry in an uninstall state, or an uninstall event.
func (h *releaseHistory) uninstalled() []string {
	var out []string
	for _, s := range append(append([]string{}, h.history...), h.storage...) {
		if strings.Contains(s, ":uninstall") {
			out = append(out, s)
		}
	}
	for _, r := range h.events {
		if strings.HasPrefix(r, "Uninstall") {
			out = append(out, "event "+r)
		}
	}
	return out
}

func (h *releaseHistory) String() string {
	return fmt.Sprintf("Ready=%s %s %q; installFailures %d upgradeFailures %d; history %v; Helm storage %v; events %v",
		h.ready, h.reason, h.message, h.installFailures, h.upgradeFailures, h.history, h.storage, h.events)
}

// failingChartRetried: velero enabled with values that make its chart fail
// at apply (the tenant API server rejects one object). helm-controller's
// RetryOnFailure strategy, at the platform's releaseRetryInterval of 15s,
// retries (install, then upgrades of the failed release) and never
// uninstalls: no uninstall in the release's history, Helm storage or
// events, and the values ConfigMap the failed install created keeps its UID
// through every retry. The claim's values fixed, the release recovers
// (Ready=True, UpgradeSucceeded) with that same ConfigMap.
func (e *env) failingChartRetried(t *testing.T, ta *tenantAPI) {
	e.patchClaim(t, demoNS, demo, fmt.Sprintf(`{"spec":{"addons":{"velero":{"enabled":true,"valuesOverride":{%q:true}}}}}`, rejectValue))
	ctx, cancel := ctxT(time.Minute)
	defer cancel()
	var cmUID types.UID
	var h *releaseHistory
	var sawUninstall []string
	check := func(ctx context.Context) (*releaseState, error) {
		rs, err := e.tenantRelease(ctx, ta, "velero")
		if err != nil {
			return nil, err
		}
		if h, err = e.releaseHistory(ctx, ta, rs); err != nil {
			return nil, err
		}
		sawUninstall = append(sawUninstall, h.uninstalled()...)
		cm := &corev1.ConfigMap{}
		switch err := ta.c.Get(ctx, client.ObjectKey{Namespace: rs.target, Name: rs.release + "-values"}, cm); {
		case err == nil && cmUID == "":
			cmUID = cm.UID
		case err == nil && cm.UID != cmUID:
			return nil, fmt.Errorf("values ConfigMap %s/%s recreated (UID %s, was %s): the release was uninstalled", rs.target, cm.Name, cm.UID, cmUID)
		case kerrors.IsNotFound(err) && cmUID != "":
			return nil, fmt.Errorf("values ConfigMap %s/%s-values gone after the failed install created it", rs.target, rs.release)
		case err != nil && !kerrors.IsNotFound(err):
			return nil, err
		}
		return rs, nil
	}
	start := time.Now()
	waitFor(t, 4*time.Minute, "velero's failing release retried three times (install + 2 upgrades)", func(ctx context.Context) (bool, string, error) {
		if _, err := check(ctx); err != nil {
			return false, "", err
		}
		ok := h.installFailures >= 1 && h.upgradeFailures >= 2 && h.ready == "False"
		return ok, h.String() + " " + e.fluxState(), nil
	})
	t.Logf("after %.0fs: %s", time.Since(start).Seconds(), h)
	if h.reason != "InstallFailed" && h.reason != "UpgradeFailed" {
		errorf(t, "Ready reason %q, want helm-controller's InstallFailed or UpgradeFailed", h.reason)
	}
	if !strings.Contains(h.message, "-rejected") {
		errorf(t, "Ready message %q does not name the rejected ConfigMap", h.message)
	}
	if len(h.history) < 2 {
		errorf(t, "status.history %v: want every attempt recorded", h.history)
	}
	for _, s := range h.history {
		if !strings.HasSuffix(s, ":failed") {
			errorf(t, "status.history %v: want only failed attempts", h.history)
			break
		}
	}
	if cmUID == "" {
		errorf(t, "the failed install created no values ConfigMap (Helm applies what the server accepts)")
	}
	if hr, err := get(ctx, e.c, gvkHR, demoNS, demo+"-velero"); err == nil {
		for _, a := range []string{"install", "upgrade"} {
			if ri, _, _ := unstructured.NestedString(hr.Object, "spec", a, "strategy", "retryInterval"); ri != loopbackRetryInterval {
				errorf(t, "HelmRelease %s spec.%s.strategy.retryInterval %q, want %s (releaseRetryInterval)", hr.GetName(), a, ri, loopbackRetryInterval)
			}
		}
	}

	// The values fixed: the next upgrade succeeds in place.
	e.patchClaim(t, demoNS, demo, `{"spec":{"addons":{"velero":{"valuesOverride":null}}}}`)
	var rs *releaseState
	waitFor(t, 3*time.Minute, "velero recovered", func(ctx context.Context) (bool, string, error) {
		var err error
		if rs, err = check(ctx); err != nil {
			return false, "", err
		}
		same := len(rs.installed) == 0 && len(rs.values) == 0 || reflect.DeepEqual(rs.installed, rs.values)
		return h.ready == "True" && rs.installed != nil && same, h.String(), nil
	})
	if h.reason != "UpgradeSucceeded" {
		errorf(t, "Ready reason %q after the fix, want UpgradeSucceeded", h.reason)
	}
	if _, ok := rs.installed[rejectValue]; ok {
		errorf(t, "installed values still carry %s: %v", rejectValue, rs.installed)
	}
	rej := &corev1.ConfigMap{}
	if err := ta.c.Get(ctx, client.ObjectKey{Namespace: rs.target, Name: rs.release + "-rejected"}, rej); !kerrors.IsNotFound(err) {
		errorf(t, "ConfigMap %s-rejected: %v, want not found", rs.release, err)
	}
	if len(h.storage) == 0 || !strings.HasSuffix(h.storage[len(h.storage)-1], ":deployed") {
		errorf(t, "Helm storage %v: want the newest revision deployed", h.storage)
	}
	if len(sawUninstall) > 0 {
		errorf(t, "the release was uninstalled at some point: %v", sawUninstall)
	}
	t.Logf("recovered: %s; values ConfigMap UID %s throughout", h, cmUID)
}
