package sim

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/webhooks"
)

// outages are the providers the simulator has taken down.
type outages struct {
	mu      sync.Mutex
	fx      bool
	payouts bool
}

func (o *outages) any() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.fx || o.payouts
}

// payoutProvider is the sandbox payout rail, down while the simulator says
// so.
type payoutProvider struct {
	s    *Sim
	next payments.PayoutProvider
}

func (p *payoutProvider) Check(ctx context.Context, t *payments.Transfer, asOf time.Time) (payments.PayoutResult, error) {
	p.s.outage.mu.Lock()
	down := p.s.outage.payouts
	p.s.outage.mu.Unlock()
	if down {
		return payments.PayoutResult{}, errors.New("sim: payout provider down")
	}
	return p.next.Check(ctx, t, asOf)
}

// Receiver modes.
const (
	recvOK      = "ok"
	recv500     = "500"
	recvTimeout = "timeout"
	recvTwice   = "twice" // takes the delivery, but the answer is lost: the bank sends it again
)

// receivers are the webhook endpoints, reached in process: the bank's
// webhook client sends to https://hooks.sim/<n>, and receiver n answers
// as its mode says.
type receivers struct {
	s    *Sim
	mu   sync.Mutex
	list []*receiver
}

// A receiver is one endpoint.
type receiver struct {
	URL    string
	Mode   string
	Secret string // as the bank answered it at creation or rotation
	// Got is every delivery that reached it, in order.
	Got []delivery
}

// delivery is one attempt that reached a receiver.
type delivery struct {
	EventID   string
	Status    int  // what the receiver answered
	Delivered bool // the bank got the answer
	Valid     bool // the signature verified under the receiver's secret
	At        time.Time
}

func newReceivers(s *Sim) *receivers { return &receivers{s: s} }

// add makes a new receiver and returns it.
func (rs *receivers) add(mode string) *receiver {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rc := &receiver{URL: "https://hooks.sim/" + strconv.Itoa(len(rs.list)), Mode: mode}
	rs.list = append(rs.list, rc)
	return rc
}

func (rs *receivers) byURL(u string) *receiver {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, rc := range rs.list {
		if rc.URL == u {
			return rc
		}
	}
	return nil
}

// RoundTrip answers a delivery as its receiver's mode says.
func (rs *receivers) RoundTrip(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	req.Body.Close()
	u := "https://" + req.URL.Host + req.URL.Path
	rc := rs.byURL(u)
	if rc == nil {
		return nil, errors.New("sim: no receiver at " + u)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	d := delivery{EventID: req.Header.Get(webhooks.HeaderEventID), At: rs.s.Clock.Now()}
	ts := req.Header.Get(webhooks.HeaderTimestamp)
	d.Valid = rc.Secret != "" && webhooks.Sign(rc.Secret, ts, body) == req.Header.Get(webhooks.HeaderSignature)
	var resp *http.Response
	var err error
	switch rc.Mode {
	case recvOK:
		d.Status, d.Delivered = 200, true
	case recv500:
		d.Status, d.Delivered = 500, true
	case recvTimeout:
		d.Status = 200 // it took the delivery, but answered too late
		err = context.DeadlineExceeded
	case recvTwice:
		d.Status = 200
		err = errors.New("sim: connection reset after the receiver answered")
	}
	rc.Got = append(rc.Got, d)
	if err != nil {
		return nil, err
	}
	resp = &http.Response{
		StatusCode: d.Status,
		Status:     http.StatusText(d.Status),
		Header:     http.Header{},
		Body:       io.NopCloser(bytes.NewReader(nil)),
		Request:    req,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}
	return resp, nil
}

func init() {
	register(Op{Name: "fault.provider", Weight: 2, Fault: true, Run: func(s *Sim, r *rand.Rand) error {
		// Take a provider down, or bring one back.
		if r.IntN(2) == 0 {
			s.outage.mu.Lock()
			s.outage.payouts = !s.outage.payouts
			down := s.outage.payouts
			s.outage.mu.Unlock()
			if down {
				s.Count("fault.payouts_down")
			}
			return nil
		}
		s.outage.mu.Lock()
		s.outage.fx = !s.outage.fx
		down := s.outage.fx
		s.outage.mu.Unlock()
		if down {
			s.Count("fault.fx_down")
		}
		// The sandbox rate provider is each process's own: every node is
		// told.
		for i := range s.banks {
			s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/fx/outage", Body: map[string]bool{"enabled": down}, NoIdem: true, Bank: i + 1})
		}
		return nil
	}})
	register(Op{Name: "fault.receiver", Weight: 2, Fault: true, Run: func(s *Sim, r *rand.Rand) error {
		// A receiver starts failing, or recovers.
		s.hooks.mu.Lock()
		defer s.hooks.mu.Unlock()
		rc := Pick(r, s.hooks.list)
		if rc == nil {
			return nil
		}
		if rc.Mode != recvOK {
			rc.Mode = recvOK
			return nil
		}
		rc.Mode = Choose(r, recv500, recvTimeout, recvTwice)
		s.counts["fault.receiver_"+rc.Mode]++
		return nil
	}})
	register(Op{Name: "clock.jump", Weight: 3, Run: func(s *Sim, r *rand.Rand) error {
		// Seconds to months, mostly short.
		var d time.Duration
		switch r.IntN(10) {
		case 0:
			d = time.Duration(1+r.IntN(90)) * 24 * time.Hour
		case 1, 2:
			d = time.Duration(1+r.IntN(48)) * time.Hour
		case 3, 4, 5:
			d = time.Duration(1+r.IntN(60)) * time.Minute
		default:
			d = time.Duration(1+r.IntN(60)) * time.Second
		}
		s.Count("fault.clock_jump")
		if r.IntN(2) == 0 {
			// Through the API, as a sandbox client moves it.
			s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/clock/advance", Body: map[string]int64{"seconds": int64(d / time.Second)}, NoIdem: true})
			return nil
		}
		s.Clock.Add(d)
		return nil
	}})
}
