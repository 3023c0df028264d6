package function

import (
	"fmt"
	"math"
	"net"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/alecthomas/kong"
	"github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// ServerCLI is the command line shared by every tenantkube function binary.
// Its flags follow the Crossplane function template, so a Function package
// runtime (which sets TLS_SERVER_CERTS_DIR) starts it unchanged.
type ServerCLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network        string `default:"tcp"   help:"Network on which to listen for gRPC connections."`
	Address        string `default:":9443" help:"Address at which to listen for gRPC connections."`
	MetricsAddress string `default:":8080" help:"Address of the Prometheus metrics listener (/metrics): every interface of the pod on port 8080 by default, as Crossplane's function runtime expects; empty disables it. An address that cannot be bound is a start-up error."`
	TLSCertsDir    string `env:"TLS_SERVER_CERTS_DIR" help:"Directory holding tls.crt, tls.key and ca.crt of the mTLS server certificate."`
	Insecure       bool   `help:"Serve without mTLS (crossplane render only; Crossplane itself always dials with mTLS). Refused together with --tls-certs-dir (or TLS_SERVER_CERTS_DIR)."`
	MaxRecvMsgSize int    `default:"4194304" help:"Largest gRPC message accepted, in bytes."`
	GCPercent      int    `default:"${gc_percent}" help:"Go garbage collector target percentage (GOGC) of the served process; -1 collects only as the heap nears --memory-limit. Ignored when the GOGC environment variable is set."`
	MemoryLimit    int64  `default:"${memory_limit}" help:"Soft memory limit of the served process's Go runtime, in bytes (GOMEMLIMIT); 0 for none. Ignored when the GOMEMLIMIT environment variable is set."`
}

// DefaultGCPercent is the served functions' default Go garbage collector
// target percentage (GOGC; Go's own default is 100): -1, off, so that the
// collector runs only as the heap nears DefaultMemoryLimit. A served call's
// garbage is large next to its live heap, so a proportional target
// collects every few calls; why: docs/architecture.md (Serving); the figures: docs/performance.md.
// The in-process benchmarks run under the same setting (bench.Loop).
const DefaultGCPercent = -1

// DefaultMemoryLimit is the served functions' default soft memory limit
// of the Go runtime (GOMEMLIMIT), in bytes: 64 MiB. The heap fills up to it
// between collections, so a busy function process stays near 90 MiB of
// resident memory, its binary included (an idle one under 40 MiB); a live heap above it (a
// request far beyond the XRD's caps) makes the collector run more often,
// never fail. Give the function's container at least 128 MiB.
const DefaultMemoryLimit = 64 << 20

// NewRunner builds the FunctionRunnerServiceServer a binary serves, given the
// logger configured by --debug.
type NewRunner func(log Logger) fnv1.FunctionRunnerServiceServer

// Main parses the command line of a function binary called name, builds its
// runner and serves it with function-sdk-go (function.Serve, gRPC's
// protobuf codec) until the listener fails. It exits the process with a
// non-zero status and a message on a bad flag or a serve error.
func Main(name, description string, newRunner NewRunner) {
	cli := &ServerCLI{}
	ctx := kong.Parse(cli, kong.Name(name), kong.Description(description), kong.UsageOnError(),
		kong.Vars{"gc_percent": strconv.Itoa(DefaultGCPercent), "memory_limit": strconv.Itoa(DefaultMemoryLimit)})
	ctx.FatalIfErrorf(cli.serve(name, newRunner))
}

// setCollector applies --gc-percent and --memory-limit (0 or less: no
// limit) where the GOGC and GOMEMLIMIT environment variables do not set
// them. It returns an error, leaving Go's defaults, when the result would
// never collect: the proportional trigger off and no memory limit.
func (c *ServerCLI) setCollector() error {
	limit := debug.SetMemoryLimit(-1) // GOMEMLIMIT's, or none
	if os.Getenv("GOMEMLIMIT") == "" {
		limit = c.MemoryLimit
		if limit <= 0 {
			limit = math.MaxInt64
		}
	}
	percent := c.GCPercent
	if env := os.Getenv("GOGC"); env != "" {
		percent = debug.SetGCPercent(100) // GOGC's
		debug.SetGCPercent(percent)
	}
	if percent < 0 && limit == math.MaxInt64 {
		return fmt.Errorf("the collector would never run: --gc-percent (or GOGC) is off and there is no memory limit; set --memory-limit (or GOMEMLIMIT) or a --gc-percent of 0 or more")
	}
	debug.SetMemoryLimit(limit)
	debug.SetGCPercent(percent)
	return nil
}

// checkTransport refuses a command line whose transport is ambiguous or
// cannot work: --insecure beside a certificates directory (the SDK would
// silently serve without TLS), neither of them, or a metrics address that
// cannot be bound (the SDK ignores that failure).
func (c *ServerCLI) checkTransport() error {
	switch {
	case c.Insecure && c.TLSCertsDir != "":
		return fmt.Errorf("--insecure and --tls-certs-dir (or TLS_SERVER_CERTS_DIR=%s) exclude each other: serve with mTLS from the certificates directory, or without TLS for crossplane render, not both", c.TLSCertsDir)
	case !c.Insecure && c.TLSCertsDir == "":
		return fmt.Errorf("no server credentials: set --tls-certs-dir (or TLS_SERVER_CERTS_DIR) to serve mTLS, or --insecure for crossplane render")
	}
	if c.MetricsAddress != "" {
		l, err := net.Listen("tcp", c.MetricsAddress)
		if err != nil {
			return fmt.Errorf("metrics listener --metrics-address=%s: %w (set another address, or an empty one to disable it)", c.MetricsAddress, err)
		}
		_ = l.Close()
	}
	return nil
}

func (c *ServerCLI) serve(name string, newRunner NewRunner) error {
	if err := c.checkTransport(); err != nil {
		return err
	}
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	if err := c.setCollector(); err != nil {
		return err
	}
	return function.Serve(Logged(name, newRunner(log), log),
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMsgSize),
		function.WithMetricsServer(c.MetricsAddress),
	)
}
