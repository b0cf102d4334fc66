package hdrf

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// ApplyOp (hdrf_apply_op, the one call behind Allocate, Release, Finish and
// Remove): an op of each type gets the Code the dedicated method gets on a
// twin engine, and that the same op gets in a batch of one (Apply,
// hdrf_apply) on a third; the three end in the same state.
func TestApplyOpMatchesTheDedicatedMethods(t *testing.T) {
	a, ja := workedExample(t)
	defer a.Close()
	b, jb := workedExample(t)
	defer b.Close()
	c, jc := workedExample(t)
	defer c.Close()
	names := []string{"sci", "dev", "prod"}
	types := []OpType{OpAllocate, OpAllocate, OpRelease, OpFinish, OpAllocate}
	applied := map[OpType]int{}
	for i := 0; i < 90; i++ {
		name, n, typ := names[i%3], int64(1+i%3), types[i%len(types)]
		if i == 80 {
			typ = OpRemove
		}
		ea := a.ApplyOp(Op{Job: ja[name], N: n, Type: typ})
		var eb error
		switch typ {
		case OpAllocate:
			eb = b.Allocate(jb[name], n)
		case OpRelease:
			eb = b.Release(jb[name], n)
		case OpFinish:
			eb = b.Finish(jb[name], n)
		default:
			eb = b.Remove(jb[name])
		}
		res := make([]Code, 1)
		if _, err := c.Apply([]Op{{Job: jc[name], N: n, Type: typ}}, res); CodeOf(err) != res[0] {
			t.Fatalf("op %d: batch of one returned %v, its result %v", i, err, res[0])
		}
		if CodeOf(ea) != CodeOf(eb) || CodeOf(ea) != res[0] {
			t.Fatalf("op %d (%d): ApplyOp %v, dedicated %v, batch %v", i, typ, ea, eb, res[0])
		}
		if ea == nil {
			applied[typ]++
		}
	}
	for _, typ := range []OpType{OpAllocate, OpRelease, OpFinish, OpRemove} {
		if applied[typ] == 0 {
			t.Errorf("no op of type %d applied", typ)
		}
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	dc, _ := c.Digest()
	if da != db || da != dc {
		t.Fatalf("digests %s %s %s", da, db, dc)
	}
}

// A Type that is none of the OpXxx values is InvalidArgument naming it,
// alone or in a batch, and changes nothing (no type is taken for another).
func TestApplyOpRefusesAnUnknownType(t *testing.T) {
	e, j := workedExample(t)
	defer e.Close()
	digest, _ := e.Digest()
	seq, _ := e.LastSeq()
	for _, typ := range []OpType{3, 7, 9, 11, -1, 256} {
		want := fmt.Sprintf("op type %d", typ)
		err := e.ApplyOp(Op{Job: j["sci"], N: 1, Type: typ})
		if !errors.Is(err, InvalidArgument) || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "is not a job event") {
			t.Fatalf("type %d: got %v", typ, err)
		}
		res := make([]Code, 1)
		n, err := e.Apply([]Op{{Job: j["sci"], N: 1, Type: typ}}, res)
		if n != 0 || res[0] != InvalidArgument || !errors.Is(err, InvalidArgument) ||
			!strings.Contains(err.Error(), "op 0 of 1 (1 refused): "+want) {
			t.Fatalf("type %d in a batch: %d applied, %v, %v", typ, n, res[0], err)
		}
	}
	if d, _ := e.Digest(); d != digest {
		t.Fatalf("digest %s, was %s", d, digest)
	}
	if s, _ := e.LastSeq(); s != seq {
		t.Fatalf("last seq %d, was %d", s, seq)
	}
}
