package maxpods

import (
	"math/rand/v2"
	"testing"
)

// shuffled returns every type of the table in a fixed random order, so the
// benchmarks measure lookups that neither the caches nor the branch predictor can
// learn in sequence.
func shuffled() []string {
	names := make([]string, Types())
	for i := range names {
		names[i] = TypeAt(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	return names
}

// BenchmarkLookup looks up every type in random order: "table" is Lookup, "map" a
// map[string]int built once (the usual Go way, which costs ~50µs at start-up),
// "parse-file" parses eni-max-pods.txt for each lookup, as bootstrap.sh does with awk.
// `make bench` prints the three side by side with their ratios.
func BenchmarkLookup(b *testing.B) {
	names := shuffled()
	var sink int
	b.Run("table", func(b *testing.B) {
		i := 0
		for b.Loop() {
			n, _ := Lookup(names[i])
			sink += n
			if i++; i == len(names) {
				i = 0
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		m := make(map[string]int, len(names))
		for _, name := range names {
			m[name], _ = Lookup(name)
		}
		i := 0
		b.ResetTimer()
		for b.Loop() {
			sink += m[names[i]]
			if i++; i == len(names) {
				i = 0
			}
		}
	})
	b.Run("parse-file", func(b *testing.B) {
		file := []byte(assetsTable())
		i := 0
		for b.Loop() {
			rows, _ := ParseRows(file)
			for _, r := range rows {
				if r.InstanceType == names[i] {
					sink += r.MaxPods
					break
				}
			}
			if i++; i == len(names) {
				i = 0
			}
		}
	})
	if sink == 0 {
		b.Log("no lookup found anything")
	}
}
