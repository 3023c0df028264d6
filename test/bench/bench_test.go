package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
)

// The functions served on loopback, built and started once for the whole
// run by the first benchmark that needs them, stopped by TestMain.
var (
	serveOnce sync.Once
	servers   Servers
	serveErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	servers.Close()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func serve(b *testing.B) Servers {
	b.Helper()
	serveOnce.Do(func() {
		if binDir, serveErr = os.MkdirTemp("", "tenantkube-bench-"); serveErr != nil {
			return
		}
		servers, serveErr = ServeAll(context.Background(), binDir)
	})
	if serveErr != nil {
		b.Fatal(serveErr)
	}
	return servers
}

// TestInputs checks that the small and reference inputs load and are a
// steady state: every step has the full observed state, the XR, its input,
// and (after the first step) the desired state of the earlier steps; and
// that every other input is recorded (or says why not). Decoding the large
// inputs takes seconds, so only the benchmarks do.
func TestInputs(t *testing.T) {
	for _, input := range AllInputs() {
		if input != Small && input != Reference {
			for _, step := range Steps {
				if _, err := os.Stat(RequestPath(input, step)); err != nil {
					if _, nerr := os.Stat(incompletePath(input)); nerr != nil {
						t.Errorf("%s/%s: %v, and no incomplete.txt says why", input, step, err)
					}
				}
			}
			continue
		}
		for i, step := range Steps {
			req, err := LoadRequest(input, step)
			if _, ok := err.(*IncompleteError); ok {
				t.Logf("%s: %v", input, err)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.GetObserved().GetComposite() == nil || len(req.GetObserved().GetResources()) == 0 {
				t.Errorf("%s/%s: no observed state", input, step)
			}
			if req.GetInput() == nil {
				t.Errorf("%s/%s: no step input", input, step)
			}
			if i > 0 && len(req.GetDesired().GetResources()) == 0 {
				t.Errorf("%s/%s: no desired state from the earlier steps", input, step)
			}
		}
	}
}

// chain runs the recorded steady-state requests of input through the
// served pipeline: each step's request is the recorded one with the desired
// state and context of the previous step's response, as Crossplane sends
// them.
func chain(ctx context.Context, ss Servers, reqs []*fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	var prev *fnv1.RunFunctionResponse
	for i, step := range Steps {
		req := reqs[i]
		if prev != nil {
			req = &fnv1.RunFunctionRequest{
				Meta: reqs[i].GetMeta(), Observed: reqs[i].GetObserved(), Input: reqs[i].GetInput(),
				RequiredResources: reqs[i].GetRequiredResources(),
				Desired:           prev.GetDesired(), Context: prev.GetContext(),
			}
		}
		rsp, err := ss[step].Run(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", step, err)
		}
		if msg := FatalOf(rsp); msg != "" {
			return nil, fmt.Errorf("%s: Fatal: %s", step, msg)
		}
		prev = rsp
	}
	return prev, nil
}

func loadAll(b *testing.B, input string) []*fnv1.RunFunctionRequest {
	b.Helper()
	reqs := make([]*fnv1.RunFunctionRequest, len(Steps))
	for i, s := range Steps {
		reqs[i] = LoadOrSkip(b, input, s)
	}
	return reqs
}

// serverAllocs is the bytes and objects the servers allocated so far.
func serverAllocs(b *testing.B, ss ...*Server) (bytes, objects float64) {
	b.Helper()
	for _, s := range ss {
		m, err := s.Metrics(MetricAllocBytes, MetricMallocs)
		if err != nil {
			b.Fatal(err)
		}
		bytes += m[MetricAllocBytes]
		objects += m[MetricMallocs]
	}
	return bytes, objects
}

// warmupCalls is how many untimed calls timed makes first.
const warmupCalls = 20

// timed runs op b.N times and reports, besides ns/op, the 50th and 99th
// percentile of one op (p50-ns, p99-ns), what the servers allocated per op
// (srv-B/op, srv-allocs/op; the client's own allocations are B/op) and the
// CPU time the servers used per op (srv-cpu-ns/op). The server figures are
// averages over the timed calls and the warm-up calls before them (the same
// call; the first ones may cost more, so they are upper bounds, most for
// inputs with few timed calls such as large).
func timed(b *testing.B, ss []*Server, op func() error) {
	b.Helper()
	// The client (this process, which holds every loaded input) collects
	// its garbage before the calls and not during them, so its collector
	// does not compete with the server for the machine's two cores:
	// Crossplane runs in another pod.
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	b0, o0 := serverAllocs(b, ss...)
	cpu0 := serversCPU(b, ss)
	// Warm up last, right before the timed calls: gRPC grows its
	// flow-control windows to the message sizes (BDP estimation) over the
	// first calls, and the server's heap grows to its steady size. The
	// first calls after any other work (the collection and metrics scrape
	// above) are slower too: timed right after it, 10 to 17 of the first
	// 21 calls of 3000-call runs were among the slowest 2%, enough to set
	// the p99 of a one-second run (about 500 calls).
	for range warmupCalls {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	cpu1 := serversCPU(b, ss)
	b1, o1 := serverAllocs(b, ss...)
	calls := float64(b.N + warmupCalls)
	slices.Sort(lat)
	b.ReportMetric(float64(percentile(lat, 50).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(percentile(lat, 99).Nanoseconds()), "p99-ns")
	b.ReportMetric((b1-b0)/calls, "srv-B/op")
	b.ReportMetric((o1-o0)/calls, "srv-allocs/op")
	b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/calls, "srv-cpu-ns/op")
}

// serversCPU is the CPU time the servers used so far.
func serversCPU(b *testing.B, ss []*Server) time.Duration {
	b.Helper()
	var total time.Duration
	for _, s := range ss {
		c, err := s.CPU()
		if err != nil {
			b.Fatal(err)
		}
		total += c
	}
	return total
}

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(float64(p)/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func (ss Servers) list() []*Server {
	out := make([]*Server, 0, len(Steps))
	for _, s := range Steps {
		out = append(out, ss[s])
	}
	return out
}

// BenchmarkPipelineGRPC runs the whole three-step pipeline once per op
// over loopback gRPC against the served function binaries, as Crossplane
// calls them: the real served path (protobuf encoding, gRPC, the SDK's
// server) included.
func BenchmarkPipelineGRPC(b *testing.B) {
	for _, input := range Inputs {
		b.Run("input="+input, func(b *testing.B) {
			reqs := loadAll(b, input)
			ss := serve(b)
			ctx := context.Background()
			timed(b, ss.list(), func() error { _, err := chain(ctx, ss, reqs); return err })
		})
	}
}

// BenchmarkRunFunctionGRPC is one RunFunction call of each function over
// loopback gRPC, on the small and reference inputs: the served call from
// the moment the encoded request is handed to gRPC until the encoded
// response is back (the server decoding, running, encoding; gRPC's
// transport both ways). The request is encoded once beforehand and the
// response is not decoded inside the timing: those are the client's
// (Crossplane's) costs, which BenchmarkWire op=encode and
// BenchmarkPipelineGRPC include.
func BenchmarkRunFunctionGRPC(b *testing.B) {
	for _, step := range Steps {
		for _, input := range []string{Small, Reference} {
			b.Run("fn="+step+"/input="+input, func(b *testing.B) {
				req := LoadOrSkip(b, input, step)
				wire, err := proto.Marshal(req)
				if err != nil {
					b.Fatal(err)
				}
				ss := serve(b)
				ctx := context.Background()
				first, err := ss[step].RunWire(ctx, wire)
				if err != nil {
					b.Fatal(err)
				}
				rsp := &fnv1.RunFunctionResponse{}
				if err := proto.Unmarshal(first, rsp); err != nil {
					b.Fatalf("response: %v", err)
				}
				if msg := FatalOf(rsp); msg != "" {
					b.Fatalf("Fatal: %s", msg)
				}
				if len(rsp.GetDesired().GetResources()) == 0 {
					b.Fatal("response has no desired composed resources")
				}
				timed(b, []*Server{ss[step]}, func() error {
					_, err := ss[step].RunWire(ctx, wire)
					return err
				})
			})
		}
	}
}

// BenchmarkPipelineScalingGRPC is the served pipeline on the scaling
// inputs: ns/group is the time of one reconcile per node group, and
// srv-B/group what the three servers allocate for it per node group.
func BenchmarkPipelineScalingGRPC(b *testing.B) {
	for _, n := range ScalingGroups {
		b.Run(fmt.Sprintf("groups=%d", n), func(b *testing.B) {
			reqs := loadAll(b, ScalingInput(n))
			ss := serve(b)
			ctx := context.Background()
			timed(b, ss.list(), func() error { _, err := chain(ctx, ss, reqs); return err })
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/group")
		})
	}
}

// BenchmarkMessageSize reports the protobuf size of each step's steady-state
// request and response per node group (the slope between the smallest and
// largest recorded scaling inputs), the fixed part, and the node-group count
// at which the step's request (desired + observed state + required
// resources) reaches 2 MiB (groups@2MiB): half of gRPC's 4 MiB limit, the
// headroom the functions keep. It measures no time.
func BenchmarkMessageSize(b *testing.B) {
	var sizes []int
	for _, n := range ScalingGroups {
		if _, err := LoadRequest(ScalingInput(n), Steps[0]); err == nil {
			sizes = append(sizes, n)
		}
	}
	if len(sizes) < 2 {
		b.Skip("fewer than two complete scaling inputs")
	}
	lo, hi := sizes[0], sizes[len(sizes)-1]
	for _, step := range Steps {
		b.Run("fn="+step, func(b *testing.B) {
			reqLo, reqHi := LoadOrSkip(b, ScalingInput(lo), step), LoadOrSkip(b, ScalingInput(hi), step)
			rspLo, rspHi := response(b, step, lo), response(b, step, hi)
			b.ResetTimer()
			for range b.N {
				runtime.KeepAlive(reqLo)
			}
			reqSlope := float64(proto.Size(reqHi)-proto.Size(reqLo)) / float64(hi-lo)
			rspSlope := float64(proto.Size(rspHi)-proto.Size(rspLo)) / float64(hi-lo)
			reqFixed := float64(proto.Size(reqLo)) - reqSlope*float64(lo)
			b.ReportMetric(reqSlope, "req-B/group")
			b.ReportMetric(rspSlope, "rsp-B/group")
			b.ReportMetric(reqFixed, "req-fixed-B")
			b.ReportMetric(float64(proto.Size(rspLo))-rspSlope*float64(lo), "rsp-fixed-B")
			b.ReportMetric(math.Floor((2<<20-reqFixed)/reqSlope), "groups@2MiB")
		})
	}
}

// response is the recorded response of step for the scaling input with n
// groups: the next step's recorded desired state (the pipeline's desired
// state for the last step, computed by the served function).
func response(b *testing.B, step string, n int) *fnv1.RunFunctionResponse {
	b.Helper()
	i := slices.Index(Steps, step)
	if i+1 < len(Steps) {
		next := LoadOrSkip(b, ScalingInput(n), Steps[i+1])
		return &fnv1.RunFunctionResponse{Desired: next.GetDesired(), Context: next.GetContext()}
	}
	rsp, err := serve(b)[step].Run(context.Background(), LoadOrSkip(b, ScalingInput(n), step))
	if err != nil {
		b.Fatal(err)
	}
	return rsp
}

// BenchmarkRSS starts each function binary afresh and reports its resident
// memory (VmRSS) idle and after 1 000, 10 000 and 20 000 RunFunction calls
// on the reference input, with the memory its Go runtime holds from the
// system (go_memstats_sys_bytes) and its goroutines after each: growth
// from 10 000 to 20 000 calls would be a leak. (The first thousands of
// calls fill the heap up to the served memory limit, and the runtime may
// map one more 4 MiB chunk while they do; the heap in use is no measure
// either: with the served collector setting it fills up to the limit
// between collections, so a snapshot shows where in that cycle the
// process was.) The calls send the request already encoded (RunWire). It
// makes its 20 000 calls whatever b.N is; run it with -benchtime=1x.
func BenchmarkRSS(b *testing.B) {
	serve(b) // builds the binaries into binDir
	for _, step := range Steps {
		b.Run("fn="+step, func(b *testing.B) {
			req := LoadOrSkip(b, Reference, step)
			wire, err := proto.Marshal(req)
			if err != nil {
				b.Fatal(err)
			}
			srv, err := Serve(context.Background(), step, binDir+"/function-"+step)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			time.Sleep(2 * time.Second) // let start-up settle
			idle, err := srv.RSS()
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			snapshots := map[int]string{1000: "1k", 10000: "10k", 20000: "20k"}
			b.ResetTimer()
			for i := 1; i <= 20000; i++ {
				if _, err := srv.RunWire(ctx, wire); err != nil {
					b.Fatal(err)
				}
				if at, ok := snapshots[i]; ok {
					rss, err := srv.RSS()
					if err != nil {
						b.Fatal(err)
					}
					m, err := srv.Metrics("go_memstats_sys_bytes", "go_goroutines")
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(rss), "rss-"+at+"-B")
					b.ReportMetric(m["go_memstats_sys_bytes"], "go-sys-"+at+"-B")
					b.ReportMetric(m["go_goroutines"], "goroutines-"+at)
				}
			}
			b.ReportMetric(float64(idle), "rss-idle-B") // after ResetTimer, which drops reported metrics
		})
	}
}

// BenchmarkWire is the protobuf part of one served call, without gRPC's
// transport: decoding each step's reference request from its wire form (the
// server's side) and encoding it (Crossplane's side). With the in-process
// RunFunction figures it splits a served call's cost.
func BenchmarkWire(b *testing.B) {
	for _, step := range Steps {
		for _, input := range []string{Small, Reference} {
			b.Run("fn="+step+"/input="+input, func(b *testing.B) {
				req := LoadOrSkip(b, input, step)
				wire, err := proto.Marshal(req)
				if err != nil {
					b.Fatal(err)
				}
				b.Run("op=decode", func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(len(wire)))
					for range b.N {
						if err := proto.Unmarshal(wire, &fnv1.RunFunctionRequest{}); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run("op=encode", func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(len(wire)))
					for range b.N {
						if _, err := proto.Marshal(req); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
	}
}
