package ledger

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
)

// TestHoldProblems: problems names every bad field with its message, and
// a valid request costs no allocation (it is on every hold's path).
func TestHoldProblems(t *testing.T) {
	ok := HoldRequest{DebitAccountID: "d", CreditAccountID: "c", Amount: 1, OnTimeout: TimeoutVoid,
		Narration: "line one\nline two", Reference: "ref", Key: "k"}
	t.Run("OK", func(t *testing.T) {
		for _, req := range []HoldRequest{ok, {DebitAccountID: "d", CreditAccountID: "c", Amount: MaxAmount, OnTimeout: TimeoutPost,
			Narration: strings.Repeat("é", maxNarration), Reference: strings.Repeat("r", maxReference)}} {
			if err := req.problems(); err != nil {
				t.Errorf("problems(%+v) = %v", req, err)
			}
		}
		if n := testing.AllocsPerRun(100, func() { _ = ok.problems() }); n != 0 {
			t.Errorf("a valid request allocates %v times", n)
		}
	})
	t.Run("ErrValidation", func(t *testing.T) {
		for _, c := range []struct {
			req  HoldRequest
			want map[string]string
		}{
			{HoldRequest{OnTimeout: "later", Timeout: -1, Narration: "a\x00", Reference: "a\nb", Key: strings.Repeat("k", maxKey+1)},
				map[string]string{
					"debit_account_id": "is required", "credit_account_id": "is required", "amount": "must be between 1 and 2^53-1",
					"timeout": "must not be negative", "on_timeout": "must be void or post",
					"narration": "must not contain the control character U+0000",
					"reference": "must be a single line: no line breaks or tabs", "key": "must be at most 255 characters",
				}},
			{HoldRequest{DebitAccountID: "a", CreditAccountID: "a", Amount: MaxAmount + 1, OnTimeout: TimeoutVoid,
				Narration: strings.Repeat("n", maxNarration+1), Reference: "\u202e"},
				map[string]string{
					"credit_account_id": "must differ from debit_account_id", "amount": "must be between 1 and 2^53-1",
					"narration": "must be at most 255 characters", "reference": "must not contain the bidirectional control character U+202E",
				}},
		} {
			var e *corebank.Error
			if err := c.req.problems(); !errors.As(err, &e) || e.Kind != corebank.KindInvalid {
				t.Fatalf("problems(%+v) = %v, want a validation error", c.req, err)
			}
			if diff := cmp.Diff(c.want, e.Fields); diff != "" {
				t.Errorf("problems(%+v) fields (-want +got)\n%s", c.req, diff)
			}
		}
	})
}
