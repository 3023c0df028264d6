// Command etcd is etcd v3.6 built from the Go module proxy for the live
// end-to-end test (test/e2e); the Makefile builds it into bin/etcd.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
