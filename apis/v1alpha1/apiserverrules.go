package v1alpha1

import (
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Messages of the API server's rules; the CEL messages put the field's
// name in front and the value after.
const (
	msgVolumeNameOnce   = "names must be unique"
	msgMountNamesVolume = "each name must be a volume of extraVolumes"
	msgMountPathOnce    = "mount paths must be unique"
	msgDotSegments      = "mountPath may not hold . or .. segments"
	msgVerbosityCEL     = "--v must be a level from 0 to 4 (higher levels log request contents into the management cluster logs)"
)

// dotSegmentForm matches a path holding a . or .. segment.
const dotSegmentForm = `(^|/)[.][.]?(/|$)`

var dotSegment = regexp.MustCompile(dotSegmentForm)

// flagName is the CEL expression of a flag's name, "--name" of
// "--name=value", for an extraArgs entry e.
func flagName(e string) string { return e + ".split('=')[0]" }

// apiServerArgsRules are the rules of spec.controlPlane.apiServer's
// extraArgs as a list: each flag at most once.
var apiServerArgsRules = ruleTable[*APIServer]{{
	RuleDoc: RuleDoc{ID: "controlPlane.apiServer.extraArgs.flagOnce", Object: "controlPlane.apiServer", Field: "extraArgs", Go: EnforcedValidate},
	CEL: func() apiextensionsv1.ValidationRule {
		once := func(a string) string {
			return "self.extraArgs.exists_one(b, " + flagName("b") + " == " + flagName(a) + ")"
		}
		return apiextensionsv1.ValidationRule{
			Rule: "!has(self.extraArgs) || self.extraArgs.all(a, " + once("a") + ")",
			MessageExpression: celFormat("extraArgs: "+msgRepeatedFlag+": %s is repeated",
				celExpr(flagName("self.extraArgs.filter(a, !"+once("a")+")[0]"))),
			FieldPath: ".extraArgs",
		}
	},
	CheckEach: func(a *APIServer, path *field.Path) field.ErrorList {
		return repeatedIn(path.Child("extraArgs"), a.ExtraArgs, APIServerArg.Flag, msgRepeatedFlag)
	},
}}

// apiServerVolumesRules are the rules of extraVolumes as a list: names
// unique.
var apiServerVolumesRules = ruleTable[*APIServer]{{
	RuleDoc: RuleDoc{ID: "controlPlane.apiServer.extraVolumes.nameOnce", Object: "controlPlane.apiServer", Field: "extraVolumes", Go: EnforcedValidate},
	CEL: celRule("!has(self.extraVolumes) || self.extraVolumes.all(v, self.extraVolumes.exists_one(w, w.name == v.name))",
		celFormat("extraVolumes: "+msgVolumeNameOnce+": %s is repeated",
			celExpr("self.extraVolumes.map(v, v.name).filter(n, !self.extraVolumes.exists_one(w, w.name == n))[0]")), ".extraVolumes"),
	CheckEach: func(a *APIServer, path *field.Path) field.ErrorList {
		return repeatedIn(path.Child("extraVolumes"), a.ExtraVolumes, func(v APIServerVolume) string { return v.Name }, msgVolumeNameOnce)
	},
}}

// apiServerMountsRules are the rules of extraVolumeMounts as a list: each
// names a volume of extraVolumes, at a unique mount path.
var apiServerMountsRules = ruleTable[*APIServer]{{
	RuleDoc: RuleDoc{ID: "controlPlane.apiServer.extraVolumeMounts.volumeDeclared", Object: "controlPlane.apiServer", Field: "extraVolumeMounts", Go: EnforcedValidate},
	CEL: celRule("!has(self.extraVolumeMounts) || self.extraVolumeMounts.all(m, has(self.extraVolumes) && self.extraVolumes.exists(v, v.name == m.name))",
		celFormat("extraVolumeMounts: "+msgMountNamesVolume+": %s is not",
			celExpr("self.extraVolumeMounts.map(m, m.name).filter(n, !has(self.extraVolumes) || !self.extraVolumes.exists(v, v.name == n))[0]")), ".extraVolumeMounts"),
	CheckEach: func(a *APIServer, path *field.Path) field.ErrorList {
		var undeclared []string
		for _, m := range a.ExtraVolumeMounts {
			declared := slices.ContainsFunc(a.ExtraVolumes, func(v APIServerVolume) bool { return v.Name == m.Name })
			if !declared && !slices.Contains(undeclared, m.Name) {
				undeclared = append(undeclared, m.Name)
			}
		}
		var errs field.ErrorList
		for _, n := range undeclared {
			errs = append(errs, field.Invalid(path.Child("extraVolumeMounts"), n, msgMountNamesVolume))
		}
		return errs
	},
}, {
	RuleDoc: RuleDoc{ID: "controlPlane.apiServer.extraVolumeMounts.pathOnce", Object: "controlPlane.apiServer", Field: "extraVolumeMounts", Go: EnforcedValidate},
	CEL: celRule("!has(self.extraVolumeMounts) || self.extraVolumeMounts.all(m, self.extraVolumeMounts.exists_one(n, n.mountPath == m.mountPath))",
		celFormat("extraVolumeMounts: "+msgMountPathOnce+": %s is repeated",
			celExpr("self.extraVolumeMounts.map(m, m.mountPath).filter(p, !self.extraVolumeMounts.exists_one(n, n.mountPath == p))[0]")), ".extraVolumeMounts"),
	CheckEach: func(a *APIServer, path *field.Path) field.ErrorList {
		return repeatedIn(path.Child("extraVolumeMounts"), a.ExtraVolumeMounts, func(m APIServerVolumeMount) string { return m.MountPath }, msgMountPathOnce)
	},
}}

// apiServerArgRules are the rules of one well-formed extraArgs entry
// (spec.controlPlane.apiServer.extraArgs[i]); the flags they refuse are
// disjoint, so an entry gets at most one refusal.
var apiServerArgRules = ruleTable[APIServerArg]{
	argPatternRule("controlPlane.apiServer.extraArgs.reserved", ReservedFlags, func(a APIServerArg) string { return a.Flag() + " " + msgReservedFlag },
		celFormat("%s "+msgReservedFlag, celExpr(flagName("self")))),
	{
		RuleDoc: RuleDoc{ID: "controlPlane.apiServer.extraArgs.verbosity", Object: "controlPlane.apiServer.extraArgs.*", Field: "extraArgs", Go: EnforcedValidate},
		CEL: celRule("!self.matches("+celString(VerbosityFlag)+") || self.matches("+celString(MaxVerbosityFlag)+")",
			refusal("self", msgVerbosityCEL), ""),
		Check: func(a APIServerArg, path *field.Path) *field.Error {
			if s := string(a); verbosityPattern.MatchString(s) && !maxVerbosityPattern.MatchString(s) {
				return field.Invalid(path, s, msgVerbosity)
			}
			return nil
		},
	},
	argPatternRule("controlPlane.apiServer.extraArgs.peerProxyGate", PeerProxyFeatureGate, func(APIServerArg) string { return msgPeerProxyGate },
		celFormat(msgPeerProxyGate+": %s", celExpr("self"))),
	argPatternRule("controlPlane.apiServer.extraArgs.oidc", OIDCFlags, func(a APIServerArg) string { return a.Flag() + " " + msgOIDCFlag },
		celFormat("%s "+msgOIDCFlag, celExpr(flagName("self")))),
}

// argPatternRule refuses an extraArgs entry matching form, with the
// message msg gives in Go and the CEL messageExpression celMsg.
func argPatternRule(id, form string, msg func(APIServerArg) string, celMsg string) Rule[APIServerArg] {
	pattern := regexp.MustCompile(form)
	return Rule[APIServerArg]{
		RuleDoc: RuleDoc{ID: id, Object: "controlPlane.apiServer.extraArgs.*", Field: "extraArgs", Go: EnforcedValidate},
		CEL:     celRule("!self.matches("+celString(form)+")", celMsg, ""),
		Check: func(a APIServerArg, path *field.Path) *field.Error {
			if pattern.MatchString(string(a)) {
				return field.Invalid(path, string(a), msg(a))
			}
			return nil
		},
	}
}

// apiServerVolumeRules are the rules of one extraVolumes entry
// (spec.controlPlane.apiServer.extraVolumes[i]).
var apiServerVolumeRules = ruleTable[APIServerVolume]{{
	RuleDoc: RuleDoc{ID: "controlPlane.apiServer.extraVolumes.oneSource", Object: "controlPlane.apiServer.extraVolumes.*", Field: "configMap, secret", Go: EnforcedValidate},
	CEL:     celRule("has(self.configMap) != has(self.secret)", celFormat(msgOneSource+" on volume %s", celExpr("self.name")), ""),
	Check: func(v APIServerVolume, path *field.Path) *field.Error {
		if (v.ConfigMap != nil) == (v.Secret != nil) {
			return field.Invalid(path, v.Name, msgOneSource)
		}
		return nil
	},
}, {
	RuleDoc: RuleDoc{ID: "controlPlane.apiServer.extraVolumes.reservedName", Object: "controlPlane.apiServer.extraVolumes.*", Field: "name", Go: EnforcedValidate},
	CEL: celRule("!(self.name in "+celList(ReservedVolumeNames)+")",
		celFormat("name %s "+msgReservedVolume, celExpr("self.name")), ".name"),
	Check: func(v APIServerVolume, path *field.Path) *field.Error {
		if slices.Contains(ReservedVolumeNames, v.Name) {
			return field.Invalid(path.Child("name"), v.Name, msgReservedVolume)
		}
		return nil
	},
}}

// apiServerMountRules are the rules of one extraVolumeMounts entry whose
// mountPath is within its length
// (spec.controlPlane.apiServer.extraVolumeMounts[i]).
var apiServerMountRules = ruleTable[APIServerVolumeMount]{{
	RuleDoc: RuleDoc{ID: "controlPlane.apiServer.extraVolumeMounts.dotSegments", Object: "controlPlane.apiServer.extraVolumeMounts.*", Field: "mountPath", Go: EnforcedValidate},
	CEL:     celRule("!self.mountPath.matches("+celString(dotSegmentForm)+")", refusal("self.mountPath", msgDotSegments), ".mountPath"),
	Check: func(m APIServerVolumeMount, path *field.Path) *field.Error {
		if dotSegment.MatchString(m.MountPath) {
			return field.Invalid(path.Child("mountPath"), m.MountPath, msgDotSegments)
		}
		return nil
	},
}, {
	RuleDoc: RuleDoc{ID: "controlPlane.apiServer.extraVolumeMounts.reservedPath", Object: "controlPlane.apiServer.extraVolumeMounts.*", Field: "mountPath", Go: EnforcedValidate},
	CEL: celRule(celList(ReservedMountPaths)+".all(r, self.mountPath != r && !self.mountPath.startsWith(r + '/') && !r.startsWith(self.mountPath + '/'))",
		celFormat("mountPath %s "+msgReservedMountPath+" (%s)", celExpr("self.mountPath"), strings.Join(ReservedMountPaths, ", ")), ".mountPath"),
	Check: func(m APIServerVolumeMount, path *field.Path) *field.Error {
		for _, r := range ReservedMountPaths {
			if m.MountPath == r || strings.HasPrefix(m.MountPath, r+"/") || strings.HasPrefix(r, m.MountPath+"/") {
				return field.Invalid(path.Child("mountPath"), m.MountPath, msgReservedMountPath)
			}
		}
		return nil
	},
}}

// celList is v as a CEL list of string literals.
func celList(v []string) string {
	q := make([]string, len(v))
	for i, s := range v {
		q[i] = celString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
