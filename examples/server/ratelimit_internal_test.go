package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/httpapi"
)

// TestRateLimitFlags: -rate-limit and -auth-fail-limit, their defaults
// by environment, and an error naming the flag for anything else.
func TestRateLimitFlags(t *testing.T) {
	var (
		off      = httpapi.Rate{}
		prod     = httpapi.Rate{Count: 100, Per: time.Second, Burst: 200}
		prodAuth = httpapi.Rate{Count: 10, Per: time.Minute, Burst: 20}
	)
	for _, tt := range []struct {
		name           string
		args           []string
		rate, authFail httpapi.Rate
		wantErr        string
	}{
		{name: "SandboxOff", rate: off, authFail: off},
		{name: "ProductionOn", args: []string{"-env", "production"}, rate: prod, authFail: prodAuth},
		{name: "ProductionOff", args: []string{"-env", "production", "-rate-limit", "off", "-auth-fail-limit", "off"}, rate: off, authFail: off},
		{name: "ProductionOneOff", args: []string{"-env", "production", "-rate-limit", "off"}, rate: off, authFail: prodAuth},
		{name: "SandboxOn", args: []string{"-rate-limit", "5/m"}, rate: httpapi.Rate{Count: 5, Per: time.Minute, Burst: 5}, authFail: off},
		{name: "PerSecondBurst", args: []string{"-rate-limit", "50/s,burst=80", "-auth-fail-limit", "3/s,burst=1"},
			rate: httpapi.Rate{Count: 50, Per: time.Second, Burst: 80}, authFail: httpapi.Rate{Count: 3, Per: time.Second, Burst: 1}},
		{name: "ProductionTuned", args: []string{"-env", "production", "-rate-limit", "1000/s,burst=1000"},
			rate: httpapi.Rate{Count: 1000, Per: time.Second, Burst: 1000}, authFail: prodAuth},
		{name: "ErrEmpty", args: []string{"-rate-limit", ""}, wantErr: "-rate-limit is empty"},
		{name: "ErrEmptyProduction", args: []string{"-env", "production", "-auth-fail-limit", " "}, wantErr: "-auth-fail-limit is empty"},
		{name: "ErrWord", args: []string{"-rate-limit", "fast"}, wantErr: `-rate-limit "fast" is not "off" or a rate like 100/s,burst=200`},
		{name: "ErrUnit", args: []string{"-rate-limit", "10/d"}, wantErr: `-rate-limit "10/d": the unit after the slash must be s, m or h`},
		{name: "ErrZero", args: []string{"-rate-limit", "0/s"}, wantErr: `-rate-limit "0/s": the count before the slash must be from 1`},
		{name: "ErrBurst", args: []string{"-auth-fail-limit", "10/m,burst=x"}, wantErr: `-auth-fail-limit "10/m,burst=x": burst must be a whole number`},
		{name: "ErrOption", args: []string{"-auth-fail-limit", "10/m,size=2"}, wantErr: `-auth-fail-limit "10/m,size=2": after the rate only burst=B may follow`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DATABASE_URL", "")
			c, ok := parsed(t, append([]string{"-memory"}, tt.args...), tt.wantErr)
			if !ok {
				return
			}
			if diff := cmp.Diff([2]httpapi.Rate{tt.rate, tt.authFail}, [2]httpapi.Rate{c.rateLimit, c.authFailLimit}); diff != "" {
				t.Errorf("[-rate-limit, -auth-fail-limit] (-want +got):\n%s", diff)
			}
			if lim := c.limits(); (lim == nil) != (tt.rate.Off() && tt.authFail.Off()) {
				t.Errorf("limits() = %v with rates %v, %v", lim, tt.rate, tt.authFail)
			} else if lim != nil && (lim.Key != tt.rate || lim.Address != tt.rate || lim.FailedAuth != tt.authFail) {
				t.Errorf("limits() = %+v", lim)
			}
		})
	}
}
