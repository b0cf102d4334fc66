package hdrf

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Issue 26: a refused call changes nothing — the digest, LastSeq and the
// store opened again — and Go refuses what C refuses (one validation layer,
// the engine's). The C and C++ harnesses cover every entry point
// (tests/capi/refusal_test.cc, tests/api/refusal_test.cc); this checks the
// Go path to them.
func TestRefusedCallsChangeNothing(t *testing.T) {
	db := t.TempDir() + "/db"
	e, err := Create("cpu=10", []QueueSpec{{Path: "root/a"}, {Path: "root/b"}}, &Options{DBPath: db})
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.Submit(JobSpec{Name: "run", Queue: "root/a", Tasks: 4, Task: "cpu=1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Allocate(run, 2); err != nil {
		t.Fatal(err)
	}
	refusals := []struct {
		code Code
		text string
		call func(e *Engine) error
	}{
		{NotFound, "root/nowhere", func(e *Engine) error {
			_, err := e.Reconcile([]TruthJob{{Name: "z", Queue: "root/nowhere", Task: "cpu=1", Tasks: 1}}, nil)
			return err
		}},
		{OutOfRange, "free", func(e *Engine) error {
			_, err := e.Reconcile([]TruthJob{{Name: "z", Queue: "root/b", Task: "cpu=5", Tasks: 3, Running: 3}}, nil)
			return err
		}},
		{InvalidArgument, "largest weight", func(e *Engine) error {
			_, err := e.Submit(JobSpec{Name: "x", Queue: "root/b", Task: "cpu=1", Tasks: 1, Weight: 1e304})
			return err
		}},
		{InvalidArgument, "finite", func(e *Engine) error {
			return e.UpdateQueue(QueueSpec{Path: "root/b", Weight: math.Inf(1)})
		}},
		{InvalidArgument, "cpus", func(e *Engine) error { return e.SetCapacity("cpus=1") }},
	}
	for _, r := range refusals {
		digest, _ := e.Digest()
		seq, _ := e.LastSeq()
		err := r.call(e)
		if !errors.Is(err, r.code) || !strings.Contains(err.Error(), r.text) {
			t.Fatalf("%s: got %v", r.text, err)
		}
		if d, _ := e.Digest(); d != digest {
			t.Fatalf("%s: digest changed", r.text)
		}
		e.Close()
		if e, err = Open(db, nil); err != nil {
			t.Fatal(err)
		}
		d, _ := e.Digest()
		s, _ := e.LastSeq()
		if d != digest || s != seq {
			t.Fatalf("%s: the store changed: %s/%d, was %s/%d", r.text, d, s, digest, seq)
		}
	}
	e.Close()
	if _, err := Create("cpus=1", nil, nil); !errors.Is(err, InvalidArgument) {
		t.Fatalf("cpus: %v", err)
	}
}
