package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
)

// MaxMessageSize is the gRPC message limit the benchmarks' servers and
// clients use: far above Crossplane's 4 MiB, so the inputs beyond the API
// cap (Large) can still be measured. The request-size benchmark reports how
// each input compares with 4 MiB.
const MaxMessageSize = 256 << 20

// Build builds the function binaries of steps into dir with `go build`
// (the build cache makes a repeated build cheap) and returns their paths
// by step.
func Build(ctx context.Context, dir string, steps ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range steps {
		bin := filepath.Join(dir, "function-"+s)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./functions/"+s)
		cmd.Dir = RepoRoot()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go build ./functions/%s: %w\n%s", s, err, stderr.String())
		}
		out[s] = bin
	}
	return out, nil
}

// Server is a function binary serving on loopback without TLS, and a gRPC
// client of it.
type Server struct {
	Step        string
	Addr        string
	MetricsAddr string
	Client      fnv1.FunctionRunnerServiceClient

	cmd  *exec.Cmd
	conn *grpc.ClientConn
	logs bytes.Buffer
}

// Serve starts bin (a function binary) on free loopback ports, waits until
// it accepts gRPC connections and returns it with a connected client.
func Serve(ctx context.Context, step, bin string) (*Server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	maddr, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Step: step, Addr: addr, MetricsAddr: maddr}
	s.cmd = exec.Command(bin, "--insecure", "--address="+addr, "--metrics-address="+maddr,
		"--max-recv-msg-size="+strconv.Itoa(MaxMessageSize))
	s.cmd.Stdout = &s.logs
	s.cmd.Stderr = &s.logs
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Close()
			return nil, fmt.Errorf("%s did not listen on %s: %v\n%s", bin, addr, err, s.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.conn, err = grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)))
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Client = fnv1.NewFunctionRunnerServiceClient(s.conn)
	return s, nil
}

// Run calls RunFunction on the server.
func (s *Server) Run(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return s.Client.RunFunction(ctx, req)
}

// RunWire calls RunFunction with a request already in its protobuf wire
// form and returns the response's wire form, undecoded: the served call
// alone, without the client's own encoding of the request and decoding of
// the response (Crossplane's cost, measured by BenchmarkWire).
func (s *Server) RunWire(ctx context.Context, req []byte) ([]byte, error) {
	rsp := &wireMessage{}
	err := s.conn.Invoke(ctx, fnv1.FunctionRunnerService_RunFunction_FullMethodName,
		&wireMessage{b: req}, rsp, grpc.ForceCodecV2(wireCodec{}))
	return rsp.b, err
}

// wireMessage is a protobuf message in wire form.
type wireMessage struct{ b []byte }

// wireCodec passes wireMessages through gRPC unchanged.
type wireCodec struct{}

func (wireCodec) Name() string { return "proto" }

func (wireCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*wireMessage)
	if !ok {
		return nil, fmt.Errorf("wireCodec: cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(m.b)}, nil
}

func (wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*wireMessage)
	if !ok {
		return fmt.Errorf("wireCodec: cannot unmarshal into %T", v)
	}
	m.b = data.Materialize()
	return nil
}

// Pid is the server process's id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Close stops the server process (only this one, by its pid) and the client.
func (s *Server) Close() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// RSS is the server process's resident set size in bytes (VmRSS of
// /proc/<pid>/status).
func (s *Server) RSS() (int64, error) { return ProcessRSS(s.Pid()) }

// ProcessRSS reads VmRSS of /proc/<pid>/status, in bytes.
func ProcessRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fields := strings.Fields(rest) // "<n> kB"
			if len(fields) != 2 || fields[1] != "kB" {
				return 0, fmt.Errorf("unexpected VmRSS line %q", sc.Text())
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// Metrics reads the named counters and gauges (unlabelled samples) from
// the server's Prometheus endpoint.
func (s *Server) Metrics(names ...string) (map[string]float64, error) {
	rsp, err := http.Get("http://" + s.MetricsAddr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close()
	body, err := io.ReadAll(rsp.Body)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || !want[f[0]] {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", f[0], err)
		}
		out[f[0]] = v
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("metric %s not exported by %s", n, s.Step)
		}
	}
	return out, nil
}

// Go runtime counters of a served function (the Prometheus Go collector).
const (
	MetricAllocBytes = "go_memstats_alloc_bytes_total"
	MetricMallocs    = "go_memstats_mallocs_total"
)

// Servers are the three functions served on loopback, by step.
type Servers map[string]*Server

// ServeAll builds and serves every step's function from binaries in dir.
func ServeAll(ctx context.Context, dir string) (Servers, error) {
	bins, err := Build(ctx, dir, Steps...)
	if err != nil {
		return nil, err
	}
	out := Servers{}
	for _, s := range Steps {
		srv, err := Serve(ctx, s, bins[s])
		if err != nil {
			out.Close()
			return nil, err
		}
		out[s] = srv
	}
	return out, nil
}

// Close stops every server.
func (ss Servers) Close() {
	for _, s := range ss {
		s.Close()
	}
}

// Runner calls each step's server.
func (ss Servers) Runner() Runner {
	return func(ctx context.Context, step string, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
		s, ok := ss[step]
		if !ok {
			return nil, fmt.Errorf("no server for step %q", step)
		}
		return s.Run(ctx, req)
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// CPU is the server process's CPU time so far (user and system, from
// /proc/<pid>/stat, in clock ticks of 10 ms: read it over many calls).
func (s *Server) CPU() (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.Pid()))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// utime and stime are fields 14 and 15, the 12th and 13th after it.
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", s.Pid())
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad /proc/%d/stat: %v %v", s.Pid(), err1, err2)
	}
	return time.Duration(ut+st) * (time.Second / clockTicks), nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on Linux).
const clockTicks = 100
