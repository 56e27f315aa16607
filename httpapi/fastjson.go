package httpapi

import (
	"github.com/corebank/corebank/payments"
)

// decodeTransfer decodes a POST /transfers body into v as decodeJSON
// would. The common body (a flat object of the known fields, plain ASCII
// strings without escapes, an integer amount, a flat meta object) is
// parsed by hand; anything else (escapes, non-ASCII, other keys or key
// spellings, null, floats, nesting, trailing data, malformed input) goes to
// decodeJSON, which owns every error message. So the fast path changes
// nothing but speed (TestDecodeTransferMatchesDecodeJSON).
func decodeTransfer(body []byte, v *payments.NewTransfer) error {
	var t payments.NewTransfer
	if fastTransfer(body, &t) {
		*v = t
		return nil
	}
	return decodeJSON(body, v)
}

// fastTransfer parses body into t when it has the common shape, reporting
// whether it did. On false, t holds partial results and must be discarded.
func fastTransfer(body []byte, t *payments.NewTransfer) bool {
	p := fastParser{b: body}
	p.ws()
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		p.ws()
		return p.i == len(p.b)
	}
	seenMeta := false
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return false
		}
		p.ws()
		if !p.eat(':') {
			return false
		}
		p.ws()
		var dst *string
		switch string(key) { // no allocation: the conversion is only compared
		case "entity_id":
			dst = &t.EntityID
		case "account_id":
			dst = &t.AccountID
		case "payment_detail_id":
			dst = &t.PaymentDetailID
		case "counterparty_id":
			dst = &t.CounterpartyID
		case "currency":
			dst = &t.Currency
		case "payment_type":
			dst = &t.PaymentType
		case "narration":
			dst = &t.Narration
		case "unique_reference":
			dst = &t.UniqueReference
		case "fx_quote_id":
			dst = &t.FXQuoteID
		case "amount":
			n, ok := p.int64()
			if !ok {
				return false
			}
			t.Amount = n
		case "meta":
			// encoding/json merges a repeated object into the same map;
			// leave that to it.
			if seenMeta || !p.meta(&t.Meta) {
				return false
			}
			seenMeta = true
		default:
			return false
		}
		if dst != nil {
			s, ok := p.str()
			if !ok {
				return false
			}
			*dst = string(s)
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if !p.eat('}') {
			return false
		}
		p.ws()
		return p.i == len(p.b)
	}
}

type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes; the result
// aliases the body.
func (p *fastParser) str() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], true
		case c < 0x20 || c == '\\' || c >= 0x80:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// int64 reads a JSON integer (no fraction or exponent) that fits an int64.
func (p *fastParser) int64() (int64, bool) {
	neg := p.eat('-')
	start := p.i
	var n uint64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		d := uint64(p.b[p.i] - '0')
		if n > (1<<63-1-d)/10 { // would pass MaxInt64 (MinInt64 goes to the slow path)
			return 0, false
		}
		n = n*10 + d
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > 1 && p.b[start] == '0' {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r', ',', '}':
		default:
			return 0, false // a fraction, an exponent or garbage
		}
	}
	if neg {
		return -int64(n), true
	}
	return int64(n), true
}

// meta reads a flat object of strings into a new map.
func (p *fastParser) meta(m *map[string]string) bool {
	if !p.eat('{') {
		return false
	}
	out := map[string]string{}
	p.ws()
	if !p.eat('}') {
		for {
			p.ws()
			k, ok := p.str()
			if !ok {
				return false
			}
			p.ws()
			if !p.eat(':') {
				return false
			}
			p.ws()
			v, ok := p.str()
			if !ok {
				return false
			}
			out[string(k)] = string(v)
			p.ws()
			if p.eat(',') {
				continue
			}
			if !p.eat('}') {
				return false
			}
			break
		}
	}
	*m = out
	return true
}
