// Command benchgen regenerates the benchmark inputs in test/bench/testdata
// by running the real function binaries over loopback gRPC until
// the pipeline converges; see package bench. Run it with
// `go generate ./test/bench`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/tenantkube/tenantkube/test/bench"
)

func main() {
	only := flag.String("inputs", "", "comma-separated inputs to generate (default: all)")
	flag.Parse()
	if err := run(*only); err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
}

func run(only string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "benchgen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	servers, err := bench.ServeAll(ctx, dir)
	if err != nil {
		return err
	}
	defer servers.Close()
	inputs := bench.AllInputs()
	if only != "" {
		inputs = strings.Split(only, ",")
	}
	for _, in := range inputs {
		note, err := bench.Generate(ctx, servers.Runner(), in, os.Stderr)
		if err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintf(os.Stderr, "benchgen: %s is incomplete: %s\n", in, note)
		}
	}
	return nil
}
