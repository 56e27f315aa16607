package webhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/corebank/corebank"
)

// TestEventType is the type of the synthetic event SendTestEvent delivers.
const TestEventType = "webhook.test"

// eventGroup is one group of enabled_events, in SPEC order.
type eventGroup struct {
	name string
	keys []string
}

// catalog lists every subscribable event, group by group, in the order
// SPEC.md gives them. enabled_events is rendered in this order.
var catalog = []eventGroup{
	{"entities", []string{"created", "updated"}},
	{"accounts", []string{"created", "updated", "deleted"}},
	{"account_details", []string{"created", "updated", "deleted"}},
	{"inflows", []string{"completed", "failed"}},
	{"outflows", []string{"created", "completed", "failed", "cancelled", "refunded"}},
	{"funding_sessions", []string{"updated"}},
	{"payment_intent", []string{"completed", "failed", "cancelled"}},
	{"payment_dispute", []string{"created", "completed"}},
	{"payment_refund", []string{"completed", "failed"}},
	{"cards", []string{"created", "frozen", "unfrozen", "deleted"}},
}

func findGroup(name string) *eventGroup {
	for i := range catalog {
		if catalog[i].name == name {
			return &catalog[i]
		}
	}
	return nil
}

func (g *eventGroup) has(key string) bool {
	for _, k := range g.keys {
		if k == key {
			return true
		}
	}
	return false
}

// EventTypes returns every event type a webhook can subscribe to
// ("accounts.created", ...), in SPEC order.
func EventTypes() []string {
	var out []string
	for _, g := range catalog {
		for _, k := range g.keys {
			out = append(out, g.name+"."+k)
		}
	}
	return out
}

// EnabledEvents is a webhook's subscription: All overrides everything (every
// event type, including types added later, is delivered); otherwise an event
// "group.key" is delivered when Groups[group][key] is true. Its JSON form is
// SPEC's object of booleans, {"all": false, "accounts": {"created": true,
// ...}, ...}; it renders every known group and key, false when off.
//
// Unmarshalling keeps unknown groups and keys so that validation can name
// them (enabled_events.<group>.<key>); a non-boolean value is an error.
type EnabledEvents struct {
	All    bool
	Groups map[string]map[string]bool
}

// Enabled reports whether an event of type typ is delivered. Types outside
// the catalog (including webhook.test) are delivered only under All.
// "funding_sessions_updated", an alternative spelling in SPEC, counts as
// funding_sessions.updated.
func (e EnabledEvents) Enabled(typ string) bool {
	if e.All {
		return true
	}
	if typ == "funding_sessions_updated" {
		typ = "funding_sessions.updated"
	}
	g, k, ok := strings.Cut(typ, ".")
	if !ok {
		return false
	}
	return e.Groups[g][k]
}

// Preferred is the read-only preferred_events form: ["all"] when All is on;
// otherwise "group.all" for a group whose every event is on and
// "group.key" for each event of a partly enabled group, in SPEC order.
// It is never nil.
func (e EnabledEvents) Preferred() []string {
	if e.All {
		return []string{"all"}
	}
	out := []string{}
	for _, g := range catalog {
		on := 0
		for _, k := range g.keys {
			if e.Groups[g.name][k] {
				on++
			}
		}
		if on == len(g.keys) {
			out = append(out, g.name+".all")
			continue
		}
		for _, k := range g.keys {
			if e.Groups[g.name][k] {
				out = append(out, g.name+"."+k)
			}
		}
	}
	return out
}

// validate adds a problem for each unknown group or key and for a
// subscription with nothing enabled.
func (e EnabledEvents) validate(p corebank.Problems, field string) {
	enabled := e.All
	for gname, keys := range e.Groups {
		g := findGroup(gname)
		if g == nil {
			p.Add(field+"."+gname, "unknown event group")
			continue
		}
		for k, on := range keys {
			if !g.has(k) {
				p.Add(field+"."+gname+"."+k, "unknown event")
				continue
			}
			enabled = enabled || on
		}
	}
	if !enabled {
		p.Add(field, "enable at least one event")
	}
}

// normalized returns a copy holding only known groups and keys that are on.
func (e EnabledEvents) normalized() EnabledEvents {
	out := EnabledEvents{All: e.All, Groups: map[string]map[string]bool{}}
	for _, g := range catalog {
		for _, k := range g.keys {
			if e.Groups[g.name][k] {
				if out.Groups[g.name] == nil {
					out.Groups[g.name] = map[string]bool{}
				}
				out.Groups[g.name][k] = true
			}
		}
	}
	return out
}

// names lists what is on as "all" and "group.key" names (storage form).
func (e EnabledEvents) names() []string {
	var out []string
	if e.All {
		out = append(out, "all")
	}
	for _, g := range catalog {
		for _, k := range g.keys {
			if e.Groups[g.name][k] {
				out = append(out, g.name+"."+k)
			}
		}
	}
	return out
}

func enabledFromNames(names []string) EnabledEvents {
	e := EnabledEvents{Groups: map[string]map[string]bool{}}
	for _, n := range names {
		if n == "all" {
			e.All = true
			continue
		}
		g, k, _ := strings.Cut(n, ".")
		if e.Groups[g] == nil {
			e.Groups[g] = map[string]bool{}
		}
		e.Groups[g][k] = true
	}
	return e
}

// MarshalJSON renders "all" and every catalogued group and key.
func (e EnabledEvents) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"all":%t`, e.All)
	for _, g := range catalog {
		fmt.Fprintf(&b, `,%q:{`, g.name)
		for i, k := range g.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `%q:%t`, k, e.Groups[g.name][k])
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object of booleans. A value of the wrong JSON
// type is a validation error naming its path.
func (e *EnabledEvents) UnmarshalJSON(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return corebank.InvalidField("enabled_events", "must be an object of booleans")
	}
	out := EnabledEvents{Groups: map[string]map[string]bool{}}
	p := corebank.Problems{}
	for name, raw := range top {
		if name == "all" {
			if err := json.Unmarshal(raw, &out.All); err != nil || string(raw) == "null" {
				p.Add("enabled_events.all", "must be a boolean")
			}
			continue
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
			p.Add("enabled_events."+name, "must be an object of booleans")
			continue
		}
		group := map[string]bool{}
		for k, v := range keys {
			var on bool
			if err := json.Unmarshal(v, &on); err != nil || string(v) == "null" {
				p.Add("enabled_events."+name+"."+k, "must be a boolean")
				continue
			}
			group[k] = on
		}
		out.Groups[name] = group
	}
	if err := p.Err(); err != nil {
		return err
	}
	*e = out
	return nil
}
