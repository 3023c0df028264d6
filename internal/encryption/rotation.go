package encryption

import "slices"

// State is which key generations a cluster's API servers use: Write
// encrypts what they store (0: identity, stored in clear), Read are the
// generations they also decrypt (at most one during a rotation).
type State struct {
	Write int32   `json:"write"`
	Read  []int32 `json:"read,omitempty"`
}

// Phase is where a State stands in a rotation.
type Phase string

// Phases of a rotation from generation G to T (docs/architecture.md,
// Secrets encrypted at rest).
const (
	// PhaseStable: one key, nothing to rotate.
	PhaseStable Phase = "Stable"
	// PhaseAddingReadKey: G writes, T reads; every API server replica is
	// to load T before any writes with it.
	PhaseAddingReadKey Phase = "AddingReadKey"
	// PhaseRewriting: T writes, G reads, until every stored object of the
	// encrypted resources was written again with T.
	PhaseRewriting Phase = "Rewriting"
)

// Stable is the state of one generation.
func Stable(gen int32) State { return State{Write: gen} }

// Phase is s's phase.
func (s State) Phase() Phase {
	switch {
	case len(s.Read) == 0:
		return PhaseStable
	case s.Read[0] > s.Write:
		return PhaseAddingReadKey
	default:
		return PhaseRewriting
	}
}

// Generations are the generations s holds, Write first.
func (s State) Generations() []int32 { return append([]int32{s.Write}, s.Read...) }

// Observation is what the function observed of the running cluster for
// key set ks: RolledOut, every API server replica runs ks's
// configuration; Rewritten, every stored object was written again with
// ks.Write; Moved, the Job of ks's move (KeySet.MoveID) succeeded.
type Observation struct {
	RolledOut, Rewritten, Moved bool
}

// Next is the state that follows cur towards generation target given o:
//
//	Stable(G), target > G       → {Write G, Read [T]}   (phase 1: T for reads)
//	{G, [T]}, rolled out        → {Write T, Read [G]}   (phase 2: T writes, rewrite)
//	{T, [G]}, rolled out and
//	rewritten                   → Stable(T)             (phase 3: G dropped)
//
// anything else stays. A target at or below the write generation starts
// nothing (generations only move forward); a rotation under way finishes
// before one to a later target starts.
func Next(cur State, target int32, o Observation) State {
	switch cur.Phase() {
	case PhaseStable:
		if target > cur.Write {
			return State{Write: cur.Write, Read: []int32{target}}
		}
	case PhaseAddingReadKey:
		if o.RolledOut {
			return State{Write: cur.Read[0], Read: []int32{cur.Write}}
		}
	case PhaseRewriting:
		if o.RolledOut && o.Rewritten {
			return Stable(cur.Write)
		}
	}
	return State{Write: cur.Write, Read: slices.Clone(cur.Read)}
}
