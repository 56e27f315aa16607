package capital

import (
	"cmp"
	"math/big"
	"slices"
)

// Allot splits inventory whole shares among requests (the shares each
// applicant asked for, in order of confirmation) and returns how many each
// gets, index for index.
//
// When the total asked is at most the inventory, each gets what it asked.
// Otherwise each gets floor(inventory × asked / total) and the shares that
// rounding leaves over go one at a time to the requests with the largest
// fractional remainder (the largest-remainder method), ties to the earlier
// request, so the split is deterministic, never more than asked, and sums
// to exactly the inventory. Whole shares only: a fraction of a share cannot
// be issued, and its value is refunded instead.
//
// A zero or negative inventory allots nothing; a zero or negative request
// gets 0 and takes no part in the split; empty requests give an empty
// slice. The arithmetic is in math/big because inventory × asked overflows
// int64 long before the books get large (10^10 shares on offer and one
// request for 10^9 already do), and the total of many int64 requests can
// overflow even uint64.
func Allot(inventory int64, requests []int64) []int64 {
	out := make([]int64, len(requests))
	if inventory <= 0 {
		return out
	}
	total := new(big.Int)
	for _, r := range requests {
		if r > 0 {
			total.Add(total, big.NewInt(r))
		}
	}
	inv := big.NewInt(inventory)
	if total.Cmp(inv) <= 0 {
		for i, r := range requests {
			out[i] = max(r, 0)
		}
		return out
	}

	// Oversubscribed: inventory < total, so every floor below is less than
	// its request and fits in int64.
	type part struct {
		i   int
		rem *big.Int // inventory × asked mod total: the fraction's numerator
	}
	var parts []part
	left := inventory
	for i, r := range requests {
		if r <= 0 {
			continue
		}
		q, rem := new(big.Int).QuoRem(new(big.Int).Mul(inv, big.NewInt(r)), total, new(big.Int))
		out[i] = q.Int64()
		left -= out[i]
		if rem.Sign() > 0 {
			parts = append(parts, part{i, rem})
		}
	}
	// The fractions sum to left and each is below 1, so more requests have
	// a fraction than there are shares left: a request with none never gets
	// an extra share, and one with a fraction has room for one (its floor is
	// strictly below what it asked).
	slices.SortFunc(parts, func(a, b part) int {
		if c := b.rem.Cmp(a.rem); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	for _, p := range parts[:left] {
		out[p.i]++
	}
	return out
}
