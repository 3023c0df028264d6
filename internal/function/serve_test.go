package function

import (
	"math"
	"net"
	"runtime/debug"
	"strings"
	"testing"
)

// TestSetCollector checks which collector settings a served function ends
// up with from its flags and the GOGC / GOMEMLIMIT environment variables,
// and that a combination that would never collect is refused.
func TestSetCollector(t *testing.T) {
	// The test process's own settings, restored after each case.
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)
	for _, tc := range []struct {
		name        string
		cli         ServerCLI
		env         map[string]string
		wantPercent int
		wantLimit   int64
		wantErr     string
	}{
		{name: "defaults", cli: ServerCLI{GCPercent: DefaultGCPercent, MemoryLimit: DefaultMemoryLimit}, wantPercent: -1, wantLimit: 64 << 20},
		{name: "proportional, no limit", cli: ServerCLI{GCPercent: 100, MemoryLimit: 0}, wantPercent: 100, wantLimit: math.MaxInt64},
		{name: "negative limit is none", cli: ServerCLI{GCPercent: 200, MemoryLimit: -5}, wantPercent: 200, wantLimit: math.MaxInt64},
		{name: "off without a limit", cli: ServerCLI{GCPercent: -1, MemoryLimit: 0}, wantErr: "would never run"},
		{name: "GOGC wins", cli: ServerCLI{GCPercent: -1, MemoryLimit: DefaultMemoryLimit}, env: map[string]string{"GOGC": "150"}, wantPercent: 150, wantLimit: 64 << 20},
		{name: "GOMEMLIMIT wins", cli: ServerCLI{GCPercent: -1, MemoryLimit: DefaultMemoryLimit}, env: map[string]string{"GOMEMLIMIT": "100MiB"}, wantPercent: -1, wantLimit: 100 << 20},
		{name: "GOMEMLIMIT off with the collector off", cli: ServerCLI{GCPercent: -1, MemoryLimit: DefaultMemoryLimit}, env: map[string]string{"GOMEMLIMIT": "off"}, wantErr: "would never run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer debug.SetGCPercent(percent)
			defer debug.SetMemoryLimit(limit)
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
				// The runtime reads the variables at start-up; set what
				// they would have set.
				switch k {
				case "GOGC":
					debug.SetGCPercent(150)
				case "GOMEMLIMIT":
					if v == "off" {
						debug.SetMemoryLimit(math.MaxInt64)
					} else {
						debug.SetMemoryLimit(100 << 20)
					}
				}
			}
			err := tc.cli.setCollector()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("setCollector() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("setCollector(): %v", err)
			}
			gotPercent := debug.SetGCPercent(percent)
			gotLimit := debug.SetMemoryLimit(limit)
			if gotPercent != tc.wantPercent || gotLimit != tc.wantLimit {
				t.Errorf("GC percent, memory limit = %d, %d; want %d, %d", gotPercent, gotLimit, tc.wantPercent, tc.wantLimit)
			}
		})
	}
}

// TestCheckTransport: --insecure never silently wins over a certificates
// directory, a function without credentials does not start, and a metrics
// address that cannot be bound is an error instead of no metrics.
func TestCheckTransport(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		name    string
		cli     ServerCLI
		wantErr string
	}{
		{name: "mTLS", cli: ServerCLI{TLSCertsDir: "/tls", MetricsAddress: "127.0.0.1:0"}},
		{name: "insecure for render", cli: ServerCLI{Insecure: true}},
		{name: "insecure beside a certificates directory", cli: ServerCLI{Insecure: true, TLSCertsDir: "/tls"}, wantErr: "--insecure and --tls-certs-dir (or TLS_SERVER_CERTS_DIR=/tls) exclude each other"},
		{name: "no credentials", cli: ServerCLI{}, wantErr: "no server credentials"},
		{name: "metrics port taken", cli: ServerCLI{Insecure: true, MetricsAddress: taken.Addr().String()}, wantErr: "metrics listener --metrics-address=" + taken.Addr().String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cli.checkTransport()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
