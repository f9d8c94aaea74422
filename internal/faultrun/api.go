package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// exchange is one HTTP request the run made to an instance, and its
// outcome, as the recorder saw it.
type exchange struct {
	Inst       int // index of the instance in cluster.inst
	Method     string
	Path       string
	Start, End time.Time
	Status     int   // 0 when no answer came
	Err        error // the network error, when no answer came
}

// recorder is an http.RoundTripper that records every exchange with the
// instances, redirects included, for invariant 4.
type recorder struct {
	next  http.RoundTripper
	hosts map[string]int // instance address → index

	mu  sync.Mutex
	log []exchange
}

// RoundTrip implements http.RoundTripper.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	e := exchange{Inst: -1, Method: req.Method, Path: req.URL.Path, Start: time.Now()}
	if i, ok := r.hosts[req.URL.Host]; ok {
		e.Inst = i
	}
	res, err := r.next.RoundTrip(req)
	e.End = time.Now()
	if err != nil {
		e.Err = err
	} else {
		e.Status = res.StatusCode
	}
	r.mu.Lock()
	r.log = append(r.log, e)
	r.mu.Unlock()
	return res, err
}

// exchanges returns a copy of the log.
func (r *recorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.log...)
}

// api sends requests to the instances through the recorder.
type api struct {
	c      *cluster
	rec    *recorder
	client *http.Client
}

// newAPI returns the run's API client for the cluster's instances.
func newAPI(c *cluster) *api {
	rec := &recorder{next: http.DefaultTransport, hosts: map[string]int{}}
	for i, in := range c.inst {
		rec.hosts[in.addr] = i
	}
	return &api{c: c, rec: rec, client: &http.Client{Transport: rec, Timeout: 20 * time.Second}}
}

// answer is an instance's answer to an API request.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do sends method path (with its query) to instance inst with the API
// key. The error is a network error: no answer came.
func (a *api) do(ctx context.Context, inst int, method, path, key string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.c.inst[inst].url()+path, nil)
	if err != nil {
		return answer{}, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := a.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: res.StatusCode, header: res.Header, body: body}, nil
}

// call sends method path to instance inst, and decodes the "data" of a
// 200 answer into out (when out is not nil). Any other answer is an
// error. It is for the setup, where nothing should fail.
func (a *api) call(ctx context.Context, inst int, method, path, key string, out any) error {
	ans, err := a.do(ctx, inst, method, path, key)
	if err != nil {
		return fmt.Errorf("%s %s on %s: %w", method, path, a.c.inst[inst].name, err)
	}
	if ans.status != http.StatusOK {
		return fmt.Errorf("%s %s on %s: %d %s", method, path, a.c.inst[inst].name, ans.status, strings.TrimSpace(string(ans.body)))
	}
	if out == nil {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(ans.body, &env); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("%s %s: data: %w", method, path, err)
	}
	return nil
}
