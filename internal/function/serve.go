package function

import (
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
	MetricsAddress string `default:":8080" help:"Address of the Prometheus metrics listener; empty disables it."`
	TLSCertsDir    string `env:"TLS_SERVER_CERTS_DIR" help:"Directory holding tls.crt, tls.key and ca.crt of the mTLS server certificate."`
	Insecure       bool   `help:"Serve without mTLS (crossplane render only; Crossplane itself always dials with mTLS)."`
	MaxRecvMsgSize int    `default:"4194304" help:"Largest gRPC message accepted, in bytes."`
	GCPercent      int    `default:"${gc_percent}" help:"Go garbage collector target percentage (GOGC) of the served process; ignored when the GOGC environment variable is set."`
}

// DefaultGCPercent is the served functions' default Go garbage collector
// target percentage (GOGC; Go's own default is 100). A served call
// allocates a few MB, mostly the decoded request, over a live heap of a few
// MB, and all of it is garbage once the response is sent: at 100 the
// collector runs on nearly every call. 400 is cheaper still for a small
// cluster but lets the heap of a large one grow to five times its live
// size, and the fresh memory costs more than the collections saved
// (workers at 200 node groups: about 50 ms per call at 200, 90 ms at 400).
// The in-process benchmarks run under it too (bench.Loop).
const DefaultGCPercent = 200

// NewRunner builds the FunctionRunnerServiceServer a binary serves, given the
// logger configured by --debug.
type NewRunner func(log Logger) fnv1.FunctionRunnerServiceServer

// Main parses the command line of a function binary called name, builds its
// runner and serves it until the listener fails, with StructCodec as the
// process's gRPC codec. It exits the process with a non-zero status and a
// message on a bad flag or a serve error.
func Main(name, description string, newRunner NewRunner) {
	cli := &ServerCLI{}
	ctx := kong.Parse(cli, kong.Name(name), kong.Description(description), kong.UsageOnError(),
		kong.Vars{"gc_percent": strconv.Itoa(DefaultGCPercent)})
	ctx.FatalIfErrorf(cli.serve(newRunner))
}

func (c *ServerCLI) serve(newRunner NewRunner) error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(c.GCPercent)
	}
	RegisterStructCodec()
	return function.Serve(newRunner(log),
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMsgSize),
		function.WithMetricsServer(c.MetricsAddress),
	)
}
