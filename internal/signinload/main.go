package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// config is the run's command line.
type config struct {
	bin         string
	concurrency int
	seconds     float64
	spread      bool
	maxRSSMB    int
	maxHealthz  time.Duration
}

func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "bin", "", "the tradekit binary (required)")
	flag.IntVar(&cfg.concurrency, "concurrency", 128, "sign-ins in flight at once")
	flag.Float64Var(&cfg.seconds, "seconds", 10, "how long the load lasts; 0 sends one sign-in per worker")
	flag.BoolVar(&cfg.spread, "spread", true, "send each worker's sign-ins from its own loopback address")
	flag.IntVar(&cfg.maxRSSMB, "max-rss-mb", 512, "the resident-memory target, in MB")
	flag.DurationVar(&cfg.maxHealthz, "max-healthz", 100*time.Millisecond, "the /healthz latency target")
	flag.Parse()
	if cfg.bin == "" || cfg.concurrency < 1 || cfg.concurrency > 250*250 {
		fmt.Fprintln(os.Stderr, "signinload: give -bin, and -concurrency between 1 and 62500")
		os.Exit(2)
	}
	met, err := run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "signinload:", err)
		os.Exit(2)
	}
	if !met {
		os.Exit(1)
	}
}

// run carries out the run and reports whether both targets were met.
func run(cfg config) (bool, error) {
	work, err := os.MkdirTemp("", "signinload-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(work)
	srv, err := startServer(cfg.bin, work)
	if err != nil {
		return false, err
	}
	defer srv.stop()
	base, err := readStatus(srv.cmd.Process.Pid)
	if err != nil {
		return false, err
	}

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	rss := &rssSampler{pid: srv.cmd.Process.Pid}
	health := &prober{url: "http://" + srv.addr + "/healthz"}
	wg.Go(func() { rss.run(ctx) })
	wg.Go(func() { health.run(ctx) })
	time.Sleep(time.Second) // the latency at rest, on this machine as it is
	idle := health.take()
	res := load(cfg, srv.addr)
	stop()
	wg.Wait()
	peak, err := readStatus(srv.cmd.Process.Pid)
	if err != nil {
		return false, err
	}
	return report(cfg, base, peak, rss.max, res, idle, health.take()), nil
}

// server is the `tradekit serve` process under test.
type server struct {
	cmd  *exec.Cmd
	addr string
}

// startServer starts `tradekit serve` on a fresh SQLite file in work and
// waits until /healthz answers.
func startServer(bin, work string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(work, "serve.log"))
	if err != nil {
		return nil, err
	}
	s := &server{addr: fmt.Sprintf("127.0.0.1:%d", port)}
	s.cmd = exec.Command(bin, "serve", "--db", filepath.Join(work, "signinload.db"), "--addr", s.addr, "--no-seed")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if res, err := http.Get("http://" + s.addr + "/healthz"); err == nil {
			res.Body.Close()
			return s, nil
		}
	}
	s.stop()
	return nil, fmt.Errorf("the server did not answer /healthz within 60 s; see %s", log.Name())
}

// stop stops the server with SIGTERM, or SIGKILL after 10 s.
func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// procStatus is what /proc/<pid>/status says of memory, in KiB.
type procStatus struct {
	rss, hwm int
}

// readStatus reads VmRSS and VmHWM of the process pid.
func readStatus(pid int) (procStatus, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procStatus{}, err
	}
	defer f.Close()
	var st procStatus
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), ":")
		kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(value), " kB"))
		switch name {
		case "VmRSS":
			st.rss = kb
		case "VmHWM":
			st.hwm = kb
		}
	}
	return st, sc.Err()
}

// rssSampler keeps the highest VmRSS it reads, in KiB.
type rssSampler struct {
	pid int
	max int
}

func (s *rssSampler) run(ctx context.Context) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if st, err := readStatus(s.pid); err == nil {
			s.max = max(s.max, st.rss)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prober asks url every 50 ms and keeps each answer's latency; a failed
// or non-200 answer counts as an hour.
type prober struct {
	url       string
	mu        sync.Mutex
	latencies []time.Duration
}

// take returns the latencies kept so far and forgets them.
func (p *prober) take() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.latencies
	p.latencies = nil
	return l
}

func (p *prober) run(ctx context.Context) {
	c := &http.Client{Timeout: 10 * time.Second}
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		start := time.Now()
		res, err := c.Get(p.url)
		d := time.Since(start)
		if err != nil || res.StatusCode != http.StatusOK {
			d = time.Hour
		}
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		p.mu.Lock()
		p.latencies = append(p.latencies, d)
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// loadResult is what the sign-ins were answered.
type loadResult struct {
	statuses   map[int]int // by HTTP status; 0 for no answer
	retryAfter int         // 503s with a Retry-After header
	slowest    time.Duration
	elapsed    time.Duration
}

// load runs the workers and gathers their answers.
func load(cfg config, addr string) loadResult {
	res := loadResult{statuses: map[int]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	t0 := time.Now()
	deadline := t0.Add(time.Duration(cfg.seconds * float64(time.Second)))
	for w := range cfg.concurrency {
		c := client(w, cfg.spread)
		wg.Go(func() {
			<-start
			for i := 0; i == 0 || time.Now().Before(deadline); i++ {
				status, retry, d := signIn(c, addr, fmt.Sprintf("nobody-%d-%d@example.com", w, i))
				mu.Lock()
				res.statuses[status]++
				if status == http.StatusServiceUnavailable && retry {
					res.retryAfter++
				}
				res.slowest = max(res.slowest, d)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	res.elapsed = time.Since(t0)
	return res
}

// client returns worker w's HTTP client: from its own loopback address
// with spread, else from the default one.
func client(w int, spread bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if spread {
		d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 1, byte(w/250), byte(w%250+1))}
	}
	return &http.Client{
		Timeout:       60 * time.Second,
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// signIn posts the sign-in form for email with a wrong password and
// returns the status (0 for no answer), whether Retry-After was set, and
// how long the answer took.
func signIn(c *http.Client, addr, email string) (int, bool, time.Duration) {
	const token = "signinload-form-token"
	form := url.Values{"csrf": {token}, "email": {email}, "password": {"not the password at all"}}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/dashboard/sign-in", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "tk_csrf", Value: token})
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		return 0, false, time.Since(start)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Retry-After") != "", time.Since(start)
}

// report prints the figures and reports whether both targets were met.
// idle and busy are the /healthz latencies before and during the load.
func report(cfg config, base, peak procStatus, maxRSS int, res loadResult, idle, busy []time.Duration) bool {
	mb := func(kib int) string { return fmt.Sprintf("%.0f MB", float64(kib)*1024/1e6) }
	fmt.Printf("machine: %d CPUs (the server's GOMAXPROCS unless set), load average %s\n", runtime.NumCPU(), loadAverage())
	fmt.Printf("load: %d concurrent sign-ins for unknown emails, %.1f s, from %s\n", cfg.concurrency, res.elapsed.Seconds(),
		map[bool]string{true: "one loopback address per worker", false: "127.0.0.1"}[cfg.spread])
	var codes []int
	total := 0
	for code, n := range res.statuses {
		codes = append(codes, code)
		total += n
	}
	slices.Sort(codes)
	fmt.Printf("answers: %d:", total)
	for _, code := range codes {
		fmt.Printf(" %d×%d", res.statuses[code], code)
	}
	fmt.Printf("; 503s with Retry-After: %d of %d; slowest answer %s\n", res.retryAfter, res.statuses[503], res.slowest.Round(time.Millisecond))
	fmt.Printf("resident memory: %s before the load; peak %s (VmHWM), highest VmRSS read %s\n", mb(base.hwm), mb(peak.hwm), mb(maxRSS))
	fmt.Printf("/healthz at rest:     %s\n", quantiles(idle))
	fmt.Printf("/healthz under load:  %s\n", quantiles(busy))
	rssMet := float64(peak.hwm)*1024 < float64(cfg.maxRSSMB)*1e6
	healthMet := len(busy) > 0 && slices.Max(busy) < cfg.maxHealthz
	verdict := map[bool]string{true: "met", false: "MISSED"}
	fmt.Printf("target peak RSS < %d MB: %s; target /healthz < %s: %s\n", cfg.maxRSSMB, verdict[rssMet], cfg.maxHealthz, verdict[healthMet])
	return rssMet && healthMet
}

// quantiles describes latencies: their count, p50, p99 and maximum.
func quantiles(lat []time.Duration) string {
	if len(lat) == 0 {
		return "no probes"
	}
	lat = slices.Sorted(slices.Values(lat))
	q := func(p float64) time.Duration {
		return lat[min(len(lat)-1, int(p*float64(len(lat))))].Round(100 * time.Microsecond)
	}
	return fmt.Sprintf("%d probes, p50 %s, p99 %s, max %s", len(lat), q(0.5), q(0.99), lat[len(lat)-1].Round(100*time.Microsecond))
}

// loadAverage returns the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
