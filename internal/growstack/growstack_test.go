package growstack

import "testing"

//go:noinline
func deep(n int) byte {
	var b [512]byte
	b[n%len(b)] = byte(n)
	if n == 0 {
		return b[0]
	}
	return deep(n-1) + b[n%len(b)]
}

// BenchmarkDeepCall makes a call 48 KiB deep from a fresh goroutine, with and
// without Main first: the doublings and copies Main saves (a compiler that
// dropped its array would make the two the same).
func BenchmarkDeepCall(b *testing.B) {
	for _, grow := range []bool{false, true} {
		name := "fresh"
		if grow {
			name = "grown"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				done := make(chan byte)
				go func() {
					if grow {
						Main()
					}
					done <- deep(90)
				}()
				<-done
			}
		})
	}
}
