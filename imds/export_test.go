package imds

import "context"

// FetchSequential is Fetch reading one path at a time, the baseline of
// BenchmarkFetch.
func FetchSequential(ctx context.Context, opts Options) (*Facts, error) {
	return fetch(ctx, opts, fetchMode{sequential: true})
}
