// Package function holds what the three tenantkube composition functions
// (control-plane, workers, addons) share: the server command line, the
// tenant cluster's identity and decoded spec, naming, host policy,
// desired-state plumbing and Fatal-result errors that name a field path.
package function
