package bench

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/tenantkube/tenantkube/internal/function"
)

// RunFunc is a function's RunFunction method.
type RunFunc func(context.Context, *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error)

// batch is how many fresh requests are prepared with the timer stopped
// before they are run with the timer running (StopTimer reads the memory
// statistics, which stops the world: once per batch, not per call).
const batch = 32

// tooManyGroups is the start of the workers function's Fatal message for a
// spec with more node groups than the API allows.
const tooManyGroups = "spec.nodeGroups: Too many"

// Check runs fn once on a fresh copy of req and returns its response. It
// fails b when fn errors, answers Fatal, or writes to the request's
// observed state or input (which a function must only read). A Fatal answer
// to more node groups than the API allows skips b instead: the input
// measures scaling beyond the cap.
func Check(b *testing.B, name string, fn RunFunc, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	b.Helper()
	before := proto.Clone(req).(*fnv1.RunFunctionRequest)
	rsp, err := fn(context.Background(), Fresh(req))
	if err != nil {
		b.Fatalf("%s: RunFunction: %v", name, err)
	}
	if msg := FatalOf(rsp); msg != "" {
		if strings.Contains(msg, tooManyGroups) {
			b.Skipf("%s: %d node groups exceed the function's cap: %s", name, NodeGroupCount(req), msg)
		}
		b.Fatalf("%s: Fatal result: %s", name, msg)
	}
	if !proto.Equal(before.GetObserved(), req.GetObserved()) || !proto.Equal(before.GetInput(), req.GetInput()) ||
		!proto.Equal(before.GetMeta(), req.GetMeta()) {
		b.Fatalf("%s: RunFunction wrote to the request's observed state, input or meta", name)
	}
	return rsp
}

// Loop runs fn b.N times, each call on a Fresh copy of req, with the timer
// (and the allocation count) stopped while the copies are made, under the
// served functions' collector setting (see Collector). Besides
// ns/op it reports cpu-ns/op, the process CPU time of the calls.
func Loop(b *testing.B, fn RunFunc, req *fnv1.RunFunctionRequest) {
	LoopGC(b, fn, req, function.DefaultGCPercent)
}

// LoopGC is Loop with the collector's target percentage gcPercent (GOGC;
// see Collector for -1). It measures the function alone: the request is
// decoded once, before the loop (BenchmarkFunctionServedWork adds the
// decoding and encoding of a served call).
func LoopGC(b *testing.B, fn RunFunc, req *fnv1.RunFunctionRequest, gcPercent int) {
	b.Helper()
	defer Collector(gcPercent)()
	ctx := context.Background()
	reqs := make([]*fnv1.RunFunctionRequest, batch)
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		b.StopTimer()
		for i := range n {
			reqs[i] = Fresh(req)
		}
		c0 := ProcessCPU()
		b.StartTimer()
		for i := range n {
			if _, err := fn(ctx, reqs[i]); err != nil {
				b.Fatal(err)
			}
			reqs[i] = nil
		}
		b.StopTimer()
		cpu += ProcessCPU() - c0
		done += n
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// Collector sets this process's collector target percentage to gcPercent
// (GOGC) and returns a function that restores the earlier setting. For -1,
// the served functions' default (function.DefaultGCPercent: collect only
// at the memory limit), it also sets the soft memory limit to
// function.DefaultMemoryLimit above the heap in use now: a benchmark
// process holds every input it loaded, which a served function does not,
// so the served heap's room to fill is kept the same.
func Collector(gcPercent int) (restore func()) {
	limit := int64(math.MaxInt64)
	if gcPercent < 0 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		limit = int64(ms.HeapInuse) + function.DefaultMemoryLimit
	}
	oldLimit := debug.SetMemoryLimit(limit)
	oldPercent := debug.SetGCPercent(gcPercent)
	return func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
}

// ProcessCPU is the CPU time (user and system, all threads, GC included)
// this process has used. On a shared machine it is the steadier figure:
// wall time (ns/op) also counts the time other processes held the CPUs.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFunction is the in-process benchmark of one function (step):
// RunFunction on the recorded request of each named input, reporting the
// request and response sizes as gRPC would send them (req-B, rsp-B). It
// runs under the served functions' collector setting (gc=served: see
// Collector) and, for the reference input, under Go's default too
// (gc=gogc100).
func BenchmarkFunction(b *testing.B, step string, fn RunFunc) {
	runPerCollector(b, Inputs, func(b *testing.B, input string, gc int) {
		req := LoadOrSkip(b, input, step)
		rsp := Check(b, step+"/"+input, fn, req)
		reqSize, rspSize := proto.Size(req), proto.Size(rsp)
		LoopGC(b, fn, req, gc)
		b.ReportMetric(float64(reqSize), "req-B")
		b.ReportMetric(float64(rspSize), "rsp-B")
	})
}

// runPerCollector runs bench as sub-benchmark input=<input>/gc=served for
// each of inputs, under the served functions' collector setting, and for
// the reference input also as gc=gogc100, under Go's default.
func runPerCollector(b *testing.B, inputs []string, bench func(b *testing.B, input string, gc int)) {
	for _, input := range inputs {
		gcs := []int{function.DefaultGCPercent}
		if input == Reference {
			gcs = append(gcs, 100)
		}
		for _, gc := range gcs {
			name := "served"
			if gc != function.DefaultGCPercent {
				name = fmt.Sprintf("gogc%d", gc)
			}
			b.Run(fmt.Sprintf("input=%s/gc=%s", input, name), func(b *testing.B) { bench(b, input, gc) })
		}
	}
}

// BenchmarkFunctionScaling is the scaling benchmark of one function: the
// scaling inputs with 1 to 200 node groups, reporting the time and the
// request and response bytes per node group (ns/group, req-B/group,
// rsp-B/group).
func BenchmarkFunctionScaling(b *testing.B, step string, fn RunFunc) {
	for _, n := range ScalingGroups {
		b.Run(fmt.Sprintf("groups=%d", n), func(b *testing.B) {
			req := LoadOrSkip(b, ScalingInput(n), step)
			rsp := Check(b, fmt.Sprintf("%s/groups=%d", step, n), fn, req)
			reqSize, rspSize := proto.Size(req), proto.Size(rsp)
			Loop(b, fn, req)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/group")
			b.ReportMetric(float64(reqSize)/float64(n), "req-B/group")
			b.ReportMetric(float64(rspSize)/float64(n), "rsp-B/group")
		})
	}
}

// BenchmarkFunctionServedWork is the work a served call of one function
// (step) does besides gRPC's transport, in process: decode the wire
// request with gRPC's protobuf codec, RunFunction, encode the response
// with it, under the served binaries' collector setting (gc=served: see
// Collector) and, for the reference input, under Go's default too
// (gc=gogc100). Run on the small and reference inputs.
func BenchmarkFunctionServedWork(b *testing.B, step string, fn RunFunc) {
	runPerCollector(b, []string{Small, Reference}, func(b *testing.B, input string, gc int) {
		servedWork(b, step, fn, input, gc)
	})
}

// servedWork is one run of BenchmarkFunctionServedWork: input under the
// collector's target percentage gc.
func servedWork(b *testing.B, step string, fn RunFunc, input string, gc int) {
	req := LoadOrSkip(b, input, step)
	Check(b, step+"/"+input, fn, req)
	wire, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	codec := encoding.GetCodecV2(grpcproto.Name)
	ctx := context.Background()
	defer Collector(gc)()
	b.ReportAllocs()
	b.SetBytes(int64(len(wire)))
	c0 := ProcessCPU()
	b.ResetTimer()
	for range b.N {
		got := &fnv1.RunFunctionRequest{}
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(wire)}, got); err != nil {
			b.Fatal(err)
		}
		rsp, err := fn(ctx, got)
		if err != nil {
			b.Fatal(err)
		}
		out, err := codec.Marshal(rsp)
		if err != nil {
			b.Fatal(err)
		}
		out.Free()
	}
	b.StopTimer()
	b.ReportMetric(float64((ProcessCPU()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkStep runs the three in-process benchmarks of one function
// (step): RunFunction (BenchmarkFunction), Scaling
// (BenchmarkFunctionScaling) and ServedWork (BenchmarkFunctionServedWork).
func BenchmarkStep(b *testing.B, step string, fn RunFunc) {
	b.Run("RunFunction", func(b *testing.B) { BenchmarkFunction(b, step, fn) })
	b.Run("Scaling", func(b *testing.B) { BenchmarkFunctionScaling(b, step, fn) })
	b.Run("ServedWork", func(b *testing.B) { BenchmarkFunctionServedWork(b, step, fn) })
}
