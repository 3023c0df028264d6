// Command coredns is CoreDNS built from the Go module proxy with only the
// plugins the live etcd peers test (test/e2e/etcdpeers_test.go) configures:
// file zones for the forward and reverse records a headless Service's pods
// get, a template answering NXDOMAIN for every other name, errors and log.
// The Makefile builds it into bin/coredns.
package main

import (
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/file"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/template"

	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
