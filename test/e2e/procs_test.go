//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// proc is one process the test started. It runs in its own process group, so
// stopping it stops whatever it forked, and it gets SIGKILL from the kernel
// if the test binary dies without cleaning up (go test's timeout panic).
type proc struct {
	name string
	bin  string
	args []string
	env  []string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	// restartAlways restarts the process when it exits unasked, as the
	// kubelet restarts a Deployment's container (supervise); stopped is
	// set by stop and kill; restarts counts the restarts.
	restartAlways, stopped bool
	restarts               int
}

// supervise makes p restart 2 s after it exits without stop or kill, as
// the kubelet restarts a Deployment's container.
func (p *proc) supervise() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.restartAlways = true
}

// restarted is how often p was restarted after exiting unasked.
func (p *proc) restarted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

var (
	procsMu sync.Mutex
	procs   []*proc
)

func newProc(logDir, name, bin string, args []string, env ...string) *proc {
	p := &proc{name: name, bin: bin, args: args, env: env, log: filepath.Join(logDir, name+".log")}
	procsMu.Lock()
	procs = append(procs, p)
	procsMu.Unlock()
	return p
}

func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = false
	if p.cmd != nil {
		select {
		case <-p.done:
		default:
			return fmt.Errorf("%s is already running (pid %d)", p.name, p.cmd.Process.Pid)
		}
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "\n=== %s: %s %q\n", time.Now().Format(time.RFC3339), p.bin, p.args)
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(f, "=== %s: exited: %v\n", time.Now().Format(time.RFC3339), err)
		f.Close()
		close(done)
		p.restartIfUnasked()
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// restartIfUnasked restarts a supervised process that exited while no
// stop or kill was asked.
func (p *proc) restartIfUnasked() {
	p.mu.Lock()
	again := p.restartAlways && !p.stopped
	p.mu.Unlock()
	if !again {
		return
	}
	time.Sleep(2 * time.Second)
	p.mu.Lock()
	again = !p.stopped
	if again {
		p.restarts++
	}
	p.mu.Unlock()
	if again {
		_ = p.start()
	}
}

func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// exited returns a channel closed when the current run ends.
func (p *proc) exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return p.done
}

// signal sends sig to the process group and waits up to grace for the exit;
// then it kills the group. It reports whether the process was running.
func (p *proc) signal(sig syscall.Signal, grace time.Duration) bool {
	p.mu.Lock()
	p.stopped = true
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
	// Whatever the leader forked dies with the group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return true
}

func (p *proc) stop() bool { return p.signal(syscall.SIGTERM, 15*time.Second) }
func (p *proc) kill() bool { return p.signal(syscall.SIGKILL, 5*time.Second) }

// stopAll stops every process the test started, newest first.
func stopAll() []string {
	procsMu.Lock()
	ps := append([]*proc(nil), procs...)
	procsMu.Unlock()
	var stopped []string
	for i := len(ps) - 1; i >= 0; i-- {
		if pid := ps[i].pid(); ps[i].stop() {
			stopped = append(stopped, fmt.Sprintf("%s(pid %d)", ps[i].name, pid))
		}
	}
	return stopped
}

// runOnce runs a short-lived command to completion, logging to logDir.
func runOnce(logDir, name, bin string, timeout time.Duration, args []string, env ...string) error {
	p := newProc(logDir, name, bin, args, env...)
	if err := p.start(); err != nil {
		return err
	}
	select {
	case <-p.exited():
	case <-time.After(timeout):
		p.kill()
		return fmt.Errorf("%s did not finish within %s (log %s)", name, timeout, p.log)
	}
	if st := p.cmd.ProcessState; st != nil && !st.Success() {
		return errors.New(name + " failed: " + st.String() + " (log " + p.log + ")")
	}
	return nil
}
