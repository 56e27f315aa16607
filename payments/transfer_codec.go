package payments

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendJSON appends the JSON of r, the same bytes json.Marshal(r) gives
// (TestTransferRecordJSON checks this), without reflection.
func (r *transferRecord) appendJSON(b []byte) []byte {
	b = r.Transfer.appendFields(b, true)
	b = append(b, `,"holds":`...)
	if r.Holds == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, h := range r.Holds {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, h, true)
		}
		b = append(b, ']')
	}
	if r.DueAt != 0 {
		b = append(b, `,"due_at":`...)
		b = strconv.AppendInt(b, r.DueAt, 10)
	}
	return append(b, '}')
}

// AppendJSON appends the JSON of t to b and returns the extended slice:
// byte for byte what encoding/json writes for t (json.Marshal when
// escapeHTML, an Encoder with SetEscapeHTML(false) otherwise, less the
// Encoder's trailing newline), without reflection. It is for hot paths
// such as the POST /transfers response.
func (t *Transfer) AppendJSON(b []byte, escapeHTML bool) []byte {
	return append(t.appendFields(b, escapeHTML), '}')
}

// appendFields appends t's JSON object without its closing brace.
func (t *Transfer) appendFields(b []byte, html bool) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, t.ID, html)
	b = append(b, `,"account_id":`...)
	b = appendJSONString(b, t.AccountID, html)
	b = append(b, `,"entity_id":`...)
	b = appendJSONString(b, t.EntityID, html)
	b = append(b, `,"counterparty_id":`...)
	b = appendJSONString(b, t.CounterpartyID, html)
	b = append(b, `,"payment_detail_id":`...)
	b = appendJSONString(b, t.PaymentDetailID, html)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, t.Type, html)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, t.Currency, html)
	b = append(b, `,"amount":`...)
	b = strconv.AppendInt(b, t.Amount, 10)
	b = append(b, `,"applicable_fee":`...)
	b = strconv.AppendInt(b, t.ApplicableFee, 10)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, t.Status, html)
	b = append(b, `,"status_reason":`...)
	b = appendJSONString(b, t.StatusReason, html)
	b = append(b, `,"payment_type":`...)
	b = appendJSONString(b, t.PaymentType, html)
	b = append(b, `,"narration":`...)
	b = appendJSONString(b, t.Narration, html)
	b = append(b, `,"unique_reference":`...)
	b = appendJSONString(b, t.UniqueReference, html)
	if t.FXQuoteID != "" {
		b = append(b, `,"fx_quote_id":`...)
		b = appendJSONString(b, t.FXQuoteID, html)
	}
	if t.SourceCurrency != "" {
		b = append(b, `,"source_currency":`...)
		b = appendJSONString(b, t.SourceCurrency, html)
	}
	if t.SourceAmount != 0 {
		b = append(b, `,"source_amount":`...)
		b = strconv.AppendInt(b, t.SourceAmount, 10)
	}
	b = append(b, `,"meta":`...)
	if t.Meta == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		keys := make([]string, 0, len(t.Meta))
		for k := range t.Meta {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k, html)
			b = append(b, ':')
			b = appendJSONString(b, t.Meta[k], html)
		}
		b = append(b, '}')
	}
	b = append(b, `,"created":`...)
	b = strconv.AppendInt(b, t.Created, 10)
	b = append(b, `,"updated":`...)
	return strconv.AppendInt(b, t.Updated, 10)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string escaped as encoding/json
// does: ", \ and control characters escaped (\b \f \n \r \t short), <,
// > and & as \u003c \u003e \u0026 when html, U+2028 and U+2029 escaped,
// and invalid UTF-8 replaced by \ufffd.
func appendJSONString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
