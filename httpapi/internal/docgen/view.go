package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// page is what the template renders: the document, resolved and sorted.
type page struct {
	Title, Version, Description string
	Servers                     []server
	Auth                        []authView
	Groups                      []*group
	Schemas                     []*namedSchema
	Responses                   []*namedResponse
	Headers                     []headerView
}

type authView struct {
	Name, Kind, Description string
}

// group is a tag's operations (or the untagged ones, under "Other").
type group struct {
	Name, Anchor, Description string
	Ops                       []*opView
	Also                      []*opView // operations listed under their first tag, also tagged with this one
}

type opView struct {
	ID, Method, Path     string
	Summary, Description string
	Deprecated           bool
	Auth                 string // "" for the document's default; "no key" for security: []
	Params               []*paramView
	Body                 *bodyView
	Responses            []*respView
	firstTag             string
	tags                 []string
}

type paramView struct {
	Name, In, Description string
	Required, Deprecated  bool
	Schema                *sv
}

type bodyView struct {
	Description string
	Required    bool
	Content     []*contentView
}

type contentView struct {
	Type   string
	Schema *sv // nil when the media type has none
}

type respView struct {
	Status, Description string
	Ref, RefAnchor      string // the component response it refers to
	Headers             []headerView
	Content             []*contentView
}

// headerView is a response header: a link to a component header, or its
// name and description.
type headerView struct {
	Name, Description string
	Anchor            string // the component header's, for one from components.headers
}

type namedSchema struct {
	Name, Anchor string
	S            *sv
}

type namedResponse struct {
	Name, Anchor string
	R            *respView
}

// sv is a schema as the page shows it: a type line (the "type" template)
// and details below it (the "detail" template).
type sv struct {
	Ref, Anchor string // a component schema: a link
	Label       string // the type: string, object, array, any, ...
	Format      string
	Title       string
	Description string
	Nullable    bool
	ReadOnly    bool
	WriteOnly   bool
	Deprecated  bool
	Enum        []string // JSON values
	Constraints []constraint
	Items       *sv
	Map         *sv // the schema of properties not listed (additionalProperties)
	Props       []prop
	Combo, Sep  string // "all of" and " & ", "one of" and " | ", "any of" and " | "
	Parts       []*sv
	Not         *sv
}

type constraint struct{ Key, Value string }

type prop struct {
	Name     string
	Required bool
	S        *sv
}

// Flagged reports whether the type line of the schema ends with a format or
// a flag, which an array's or a map's type line puts in parentheses.
func (s *sv) Flagged() bool {
	return s.Format != "" || s.Nullable || s.ReadOnly || s.WriteOnly || s.Deprecated
}

// HasDetail reports whether the schema has anything to show below its type
// line.
func (s *sv) HasDetail() bool {
	if s == nil {
		return false
	}
	if s.Title != "" || s.Description != "" || len(s.Enum) > 0 || len(s.Constraints) > 0 || len(s.Props) > 0 || s.Not != nil {
		return true
	}
	if s.Items.HasDetail() || s.Map.HasDetail() || (s.Map != nil && len(s.Props) > 0) {
		return true
	}
	return slices.ContainsFunc(s.Parts, (*sv).HasDetail)
}

// methods are the operations of a path item, in the order the page lists
// them.
var methods = []string{"get", "post", "put", "patch", "delete", "head", "options", "trace"}

const untagged = "Other"

// builder resolves references against the document and hands out anchors,
// refusing a duplicate.
type builder struct {
	doc     *document
	anchors map[string]string // anchor -> what holds it
}

func (b *builder) anchor(id, what string) (string, error) {
	if prev, ok := b.anchors[id]; ok {
		return "", fmt.Errorf("%s and %s would have the same anchor %q", prev, what, id)
	}
	b.anchors[id] = what
	return id, nil
}

// slug is s with every character an anchor would not keep as is replaced
// by "-".
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, s)
}

// refName is the component name a local $ref of the kind (schemas,
// responses, ...) points to.
func refName(ref, kind string) (string, error) {
	name, ok := strings.CutPrefix(ref, "#/components/"+kind+"/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("unsupported $ref %q (want #/components/%s/<name>)", ref, kind)
	}
	return name, nil
}

// build makes the page of a document.
func build(d *document) (*page, error) {
	b := &builder{doc: d, anchors: map[string]string{}}
	p := &page{Title: d.Info.Title, Version: d.Info.Version, Description: d.Info.Description, Servers: d.Servers}
	for _, name := range slices.Sorted(maps.Keys(d.Components.SecuritySchemes)) {
		s := d.Components.SecuritySchemes[name]
		kind := strings.TrimSpace(strings.Join([]string{s.Type, s.Scheme, s.BearerFormat}, " "))
		if s.Type == "apiKey" {
			kind = fmt.Sprintf("apiKey %s in %s", s.Name, s.In)
		}
		p.Auth = append(p.Auth, authView{Name: name, Kind: kind, Description: s.Description})
	}

	// Operations, by tag.
	groups := map[string]*group{}
	groupOf := func(name string) *group {
		g := groups[name]
		if g == nil {
			g = &group{Name: name}
			groups[name] = g
		}
		return g
	}
	for _, t := range d.Tags {
		groupOf(t.Name).Description = t.Description
	}
	var ops []*opView
	for _, path := range slices.Sorted(maps.Keys(d.Paths)) {
		item := d.Paths[path]
		var shared []*parameter
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, fmt.Errorf("paths %s parameters: %w", path, err)
			}
		}
		for _, m := range methods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var o operation
			if err := json.Unmarshal(raw, &o); err != nil {
				return nil, fmt.Errorf("%s %s: %w", strings.ToUpper(m), path, err)
			}
			v, err := b.operation(path, m, &o, shared)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", strings.ToUpper(m), path, err)
			}
			ops = append(ops, v)
		}
	}
	for _, o := range ops {
		groupOf(o.firstTag).Ops = append(groupOf(o.firstTag).Ops, o)
		for _, t := range o.tags[min(1, len(o.tags)):] {
			if t != o.firstTag {
				groupOf(t).Also = append(groupOf(t).Also, o)
			}
		}
	}
	names := slices.SortedFunc(maps.Keys(groups), func(a, c string) int {
		// The untagged operations come last, unless a tag has their name.
		lastA := a == untagged && !slices.ContainsFunc(d.Tags, func(t tag) bool { return t.Name == untagged })
		lastC := c == untagged && !slices.ContainsFunc(d.Tags, func(t tag) bool { return t.Name == untagged })
		if lastA != lastC {
			if lastA {
				return 1
			}
			return -1
		}
		return cmp.Compare(a, c)
	})
	for _, name := range names {
		g := groups[name]
		var err error
		if g.Anchor, err = b.anchor("tag-"+slug(name), "tag "+name); err != nil {
			return nil, err
		}
		p.Groups = append(p.Groups, g)
	}
	for _, o := range ops {
		if _, err := b.anchor(o.ID, "operation "+strings.ToUpper(o.Method)+" "+o.Path); err != nil {
			return nil, err
		}
	}

	// Components.
	for _, name := range slices.Sorted(maps.Keys(d.Components.Schemas)) {
		a, err := b.anchor("schema-"+slug(name), "schema "+name)
		if err != nil {
			return nil, err
		}
		s, err := b.schema(d.Components.Schemas[name])
		if err != nil {
			return nil, fmt.Errorf("components.schemas.%s: %w", name, err)
		}
		p.Schemas = append(p.Schemas, &namedSchema{Name: name, Anchor: a, S: s})
	}
	for _, name := range slices.Sorted(maps.Keys(d.Components.Responses)) {
		a, err := b.anchor("response-"+slug(name), "response "+name)
		if err != nil {
			return nil, err
		}
		r, err := b.response("", d.Components.Responses[name])
		if err != nil {
			return nil, fmt.Errorf("components.responses.%s: %w", name, err)
		}
		p.Responses = append(p.Responses, &namedResponse{Name: name, Anchor: a, R: r})
	}
	for _, name := range slices.Sorted(maps.Keys(d.Components.Headers)) {
		a, err := b.anchor("header-"+slug(name), "header "+name)
		if err != nil {
			return nil, err
		}
		p.Headers = append(p.Headers, headerView{Name: name, Anchor: a, Description: d.Components.Headers[name].Description})
	}
	return p, nil
}

func (b *builder) operation(path, method string, o *operation, shared []*parameter) (*opView, error) {
	v := &opView{ID: o.OperationID, Method: strings.ToUpper(method), Path: path,
		Summary: o.Summary, Description: o.Description, Deprecated: o.Deprecated, tags: o.Tags, firstTag: untagged}
	if v.ID == "" {
		v.ID = "op-" + method + slug(path)
	}
	if len(o.Tags) > 0 {
		v.firstTag = o.Tags[0]
	}
	if o.Security != nil {
		var names []string
		for _, req := range *o.Security {
			names = append(names, strings.Join(slices.Sorted(maps.Keys(req)), " and "))
		}
		v.Auth = strings.Join(names, " or ")
		if len(names) == 0 {
			v.Auth = "no key"
		}
	}

	// Path-level parameters, unless the operation has its own of the same
	// name and place.
	var own []*parameter
	for _, raw := range o.Parameters {
		p, err := b.parameter(raw)
		if err != nil {
			return nil, err
		}
		own = append(own, p)
	}
	for _, raw := range shared {
		p, err := b.parameter(raw)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(own, func(q *parameter) bool { return q.Name == p.Name && q.In == p.In }) {
			own = append([]*parameter{p}, own...)
		}
	}
	for _, p := range own {
		s, err := b.schema(p.Schema)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		v.Params = append(v.Params, &paramView{Name: p.Name, In: p.In, Description: p.Description,
			Required: p.Required, Deprecated: p.Deprecated, Schema: s})
	}

	if rb := o.RequestBody; rb != nil {
		if rb.Ref != "" {
			name, err := refName(rb.Ref, "requestBodies")
			if err != nil {
				return nil, err
			}
			if rb = b.doc.Components.RequestBodies[name]; rb == nil {
				return nil, fmt.Errorf("no request body %q", name)
			}
		}
		content, err := b.content(rb.Content)
		if err != nil {
			return nil, fmt.Errorf("request body: %w", err)
		}
		v.Body = &bodyView{Description: rb.Description, Required: rb.Required, Content: content}
	}

	for _, status := range slices.SortedFunc(maps.Keys(o.Responses), func(a, c string) int {
		if (a == "default") != (c == "default") { // default last
			if a == "default" {
				return 1
			}
			return -1
		}
		return cmp.Compare(a, c)
	}) {
		r, err := b.response(status, o.Responses[status])
		if err != nil {
			return nil, fmt.Errorf("response %s: %w", status, err)
		}
		v.Responses = append(v.Responses, r)
	}
	return v, nil
}

func (b *builder) parameter(p *parameter) (*parameter, error) {
	if p.Ref == "" {
		return p, nil
	}
	name, err := refName(p.Ref, "parameters")
	if err != nil {
		return nil, err
	}
	q := b.doc.Components.Parameters[name]
	if q == nil || q.Ref != "" {
		return nil, fmt.Errorf("no parameter %q", name)
	}
	return q, nil
}

func (b *builder) response(status string, r *response) (*respView, error) {
	v := &respView{Status: status}
	if r.Ref != "" {
		name, err := refName(r.Ref, "responses")
		if err != nil {
			return nil, err
		}
		if r = b.doc.Components.Responses[name]; r == nil || r.Ref != "" {
			return nil, fmt.Errorf("no response %q", name)
		}
		v.Ref, v.RefAnchor = name, "response-"+slug(name)
	}
	v.Description = r.Description
	for _, name := range slices.Sorted(maps.Keys(r.Headers)) {
		h := r.Headers[name]
		if h.Ref != "" {
			hn, err := refName(h.Ref, "headers")
			if err != nil {
				return nil, err
			}
			if b.doc.Components.Headers[hn] == nil {
				return nil, fmt.Errorf("no header %q", hn)
			}
			v.Headers = append(v.Headers, headerView{Name: name, Anchor: "header-" + slug(hn)})
			continue
		}
		v.Headers = append(v.Headers, headerView{Name: name, Description: h.Description})
	}
	var err error
	v.Content, err = b.content(r.Content)
	return v, err
}

func (b *builder) content(c map[string]*mediaType) ([]*contentView, error) {
	var out []*contentView
	for _, ct := range slices.Sorted(maps.Keys(c)) {
		var s *sv
		if m := c[ct]; m != nil && m.Schema != nil {
			var err error
			if s, err = b.schema(m.Schema); err != nil {
				return nil, fmt.Errorf("%s: %w", ct, err)
			}
		}
		out = append(out, &contentView{Type: ct, Schema: s})
	}
	return out, nil
}

// schema is the view of s (nil for none); a $ref to a component becomes a
// link, which the component's own section details.
func (b *builder) schema(s *schema) (*sv, error) {
	if s == nil {
		return &sv{Label: "any"}, nil
	}
	v := &sv{Format: s.Format, Title: s.Title, Description: s.Description, Nullable: s.Nullable,
		ReadOnly: s.ReadOnly, WriteOnly: s.WriteOnly, Deprecated: s.Deprecated}
	if s.Ref != "" {
		name, err := refName(s.Ref, "schemas")
		if err != nil {
			return nil, err
		}
		if _, ok := b.doc.Components.Schemas[name]; !ok {
			return nil, fmt.Errorf("no schema %q", name)
		}
		v.Ref, v.Anchor = name, "schema-"+slug(name)
		return v, nil
	}
	for _, e := range s.Enum {
		v.Enum = append(v.Enum, compact(e))
	}
	add := func(key, value string) { v.Constraints = append(v.Constraints, constraint{key, value}) }
	if s.Minimum != "" {
		add(map[bool]string{false: "minimum", true: "exclusive minimum"}[s.ExclusiveMinimum], s.Minimum.String())
	}
	if s.Maximum != "" {
		add(map[bool]string{false: "maximum", true: "exclusive maximum"}[s.ExclusiveMaximum], s.Maximum.String())
	}
	if s.MultipleOf != "" {
		add("multiple of", s.MultipleOf.String())
	}
	for _, c := range []struct {
		key string
		n   *int
	}{{"min length", s.MinLength}, {"max length", s.MaxLength}, {"min items", s.MinItems}, {"max items", s.MaxItems},
		{"min properties", s.MinProperties}, {"max properties", s.MaxProperties}} {
		if c.n != nil {
			add(c.key, fmt.Sprint(*c.n))
		}
	}
	if s.UniqueItems {
		add("unique items", "true")
	}
	if s.Pattern != "" {
		add("pattern", s.Pattern)
	}
	if len(s.Default) > 0 {
		add("default", compact(s.Default))
	}

	var err error
	if v.Items, err = b.optional(s.Items, "items"); err != nil {
		return nil, err
	}
	if v.Not, err = b.optional(s.Not, "not"); err != nil {
		return nil, err
	}
	if a := s.AdditionalProperties; a != nil && a.Allowed {
		if v.Map, err = b.schema(a.Schema); err != nil {
			return nil, fmt.Errorf("additionalProperties: %w", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		ps, err := b.schema(s.Properties[name])
		if err != nil {
			return nil, fmt.Errorf("properties.%s: %w", name, err)
		}
		v.Props = append(v.Props, prop{Name: name, Required: slices.Contains(s.Required, name), S: ps})
	}
	for _, c := range []struct {
		parts      []*schema
		combo, sep string
	}{{s.AllOf, "all of", " & "}, {s.OneOf, "one of", " | "}, {s.AnyOf, "any of", " | "}} {
		if len(c.parts) == 0 {
			continue
		}
		if v.Combo != "" {
			return nil, fmt.Errorf("both %s and %s", v.Combo, c.combo)
		}
		v.Combo, v.Sep = c.combo, c.sep
		for i, part := range c.parts {
			ps, err := b.schema(part)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", c.combo, i, err)
			}
			v.Parts = append(v.Parts, ps)
		}
	}

	switch {
	case s.Type != "":
		v.Label = s.Type
	case len(s.Properties) > 0 || s.AdditionalProperties != nil:
		v.Label = "object"
	default:
		v.Label = "any"
	}
	return v, nil
}

func (b *builder) optional(s *schema, where string) (*sv, error) {
	if s == nil {
		return nil, nil
	}
	v, err := b.schema(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return v, nil
}
