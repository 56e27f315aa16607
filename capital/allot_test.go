package capital

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAllot(t *testing.T) {
	const e15 = 1_000_000_000_000_000
	tests := []struct {
		name      string
		inventory int64
		requests  []int64
		want      []int64
	}{
		{"undersubscribed", 100, []int64{10, 20, 30}, []int64{10, 20, 30}},
		{"exact", 60, []int64{10, 20, 30}, []int64{10, 20, 30}},
		// total 21: 10×5/21 = 2.38, 10×7/21 = 3.33, 10×9/21 = 4.29; floors
		// 2+3+4 = 9, 1 left for the largest remainder (8/21 > 7/21 > 6/21).
		{"oversubscribed, one left", 10, []int64{5, 7, 9}, []int64{3, 3, 4}},
		// total 12: 5×4/12 = 1.67, 5×2/12 = 0.83, 0.83, 1.67; floors 1+0+0+1
		// = 2, 3 left: the two 10/12 remainders, then the first of the two
		// 8/12 remainders.
		{"oversubscribed, three left, tie to the lower index", 5, []int64{4, 2, 2, 4}, []int64{2, 1, 1, 1}},
		// 7×3/9 = 2.33 each: floors 6, 1 left, all tied.
		{"all tied, one left", 7, []int64{3, 3, 3}, []int64{3, 2, 2}},
		// 8×3/9 = 2.67 each: floors 6, 2 left.
		{"all tied, two left", 8, []int64{3, 3, 3}, []int64{3, 3, 2}},
		{"one applicant oversubscribed", 5, []int64{9}, []int64{5}},
		{"zero inventory", 0, []int64{3, 4}, []int64{0, 0}},
		{"negative inventory", -5, []int64{3, 4}, []int64{0, 0}},
		{"empty requests", 10, []int64{}, []int64{}},
		{"nil requests", 10, nil, []int64{}},
		{"a request of 0, undersubscribed", 10, []int64{0, 5}, []int64{0, 5}},
		// total 6: 3×2/6 = 1, 3×4/6 = 2 exactly; the 0 takes no part.
		{"a request of 0, oversubscribed", 3, []int64{0, 2, 4}, []int64{0, 1, 2}},
		{"a negative request counts as 0", 3, []int64{-5, 2, 4}, []int64{0, 1, 2}},
		{"all requests 0", 3, []int64{0, 0}, []int64{0, 0}},
		// (10^15 − 1) × 10^15 / (2 × 10^15) = 499_999_999_999_999.5 each: the
		// product is 10^30, far past int64.
		{"10^15 shares", e15 - 1, []int64{e15, e15}, []int64{e15 / 2, e15/2 - 1}},
		// The total 3 × (2^63 − 1) overflows even uint64. (2^63 − 1) / 3 =
		// 3_074_457_345_618_258_602.33 each, 1 left, tied.
		{"total beyond uint64", math.MaxInt64, []int64{math.MaxInt64, math.MaxInt64, math.MaxInt64},
			[]int64{3_074_457_345_618_258_603, 3_074_457_345_618_258_602, 3_074_457_345_618_258_602}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Allot(tt.inventory, tt.requests)); diff != "" {
				t.Errorf("Allot(%d, %v) (-want +got)\n%s", tt.inventory, tt.requests, diff)
			}
		})
	}
}

// TestAllotProperty allots random books, mostly oversubscribed, with sizes
// from a handful of shares to totals past 10^15, and checks each against
// the definition: nobody gets more than asked, the sum is min(inventory,
// total asked), each share is the pro-rata floor or one more, the extra
// shares went to the largest remainders (ties to the lower index), and
// every applicant, having paid asked × price, gets back exactly that as
// shares plus the refund (asked − allotted) × price.
func TestAllotProperty(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	for range 2_000 {
		n := 1 + rng.IntN(40)
		scale := []int64{10, 1_000, 1_000_000, 100_000_000_000_000}[rng.IntN(4)]
		requests := make([]int64, n)
		var total int64
		for i := range requests {
			if rng.IntN(10) > 0 { // some requests are 0
				requests[i] = rng.Int64N(scale) + 1
			}
			total += requests[i]
		}
		inventory := rng.Int64N(total + total/5 + 1) // mostly below total
		price := 1 + rng.Int64N(10_000)

		got := Allot(inventory, requests)
		if len(got) != n {
			t.Fatalf("Allot(%d, %v) = %v: length %d, want %d", inventory, requests, got, len(got), n)
		}
		var sum, paid, back int64
		floors := make([]int64, n)
		rems := make([]*big.Int, n)
		for i, asked := range requests {
			a := got[i]
			if a < 0 || a > asked {
				t.Fatalf("Allot(%d, %v) = %v: request %d got %d of %d", inventory, requests, got, i, a, asked)
			}
			sum += a
			// Money: every product is below 10^14 × 10^4 and fits.
			money, shares, refund := asked*price, a*price, (asked-a)*price
			if shares+refund != money {
				t.Fatalf("applicant %d: shares %d + refund %d != paid %d", i, shares, refund, money)
			}
			paid += money
			back += shares + refund

			floors[i], rems[i] = a, new(big.Int)
			if inventory < total {
				q, r := new(big.Int).QuoRem(new(big.Int).Mul(big.NewInt(inventory), big.NewInt(asked)), big.NewInt(total), new(big.Int))
				floors[i], rems[i] = q.Int64(), r
				if a != floors[i] && a != floors[i]+1 {
					t.Fatalf("Allot(%d, %v) = %v: request %d got %d, pro-rata floor %d", inventory, requests, got, i, a, floors[i])
				}
			}
		}
		if want := min(inventory, total); sum != want {
			t.Fatalf("Allot(%d, %v) = %v: sum %d, want %d", inventory, requests, got, sum, want)
		}
		if paid != back {
			t.Fatalf("paid %d, got back %d as shares and refunds", paid, back)
		}
		// Largest remainder: no request left at its floor beats one that got
		// an extra share.
		for i := range n {
			for j := range n {
				if got[i] == floors[i]+1 && got[j] == floors[j] && requests[j] > 0 {
					if c := rems[j].Cmp(rems[i]); c > 0 || (c == 0 && j < i) {
						t.Fatalf("Allot(%d, %v) = %v: request %d (remainder %v) got the extra share over request %d (remainder %v)",
							inventory, requests, got, i, rems[i], j, rems[j])
					}
				}
			}
		}
	}
}
