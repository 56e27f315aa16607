// Command gen writes the client's operation methods from the OpenAPI
// document: one method per operation, named for its operationId, taking
// the path parameters, the request body and the operation's Params (the
// types oapi-codegen generates beside it), and returning what the
// document says the answer holds: the data of an envelope, a bare object,
// a page or iterator of a list whatever its shape, or the raw answer of a
// page meant for a browser.
//
//	go run ./internal/gen -o operations.gen.go ../httpapi/openapi.json
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"sort"
	"strings"
)

type schema map[string]any

type doc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas    map[string]schema `json:"schemas"`
		Parameters map[string]param  `json:"parameters"`
	} `json:"components"`
}

type param struct {
	Ref  string `json:"$ref"`
	Name string `json:"name"`
	In   string `json:"in"`
}

type operation struct {
	OperationID string  `json:"operationId"`
	Summary     string  `json:"summary"`
	Parameters  []param `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Schema schema `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema schema `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

// op is what the template needs of one operation.
type op struct {
	Name, Method, Path, Summary string
	PathArgs                    []string // Go names, in path order
	PathNames                   []string // as in the template
	Params                      bool
	Body                        string // "", "json" or "form"
	Result                      string // Go type of the answer, or of one item of a list
	Kind                        string // "object", "list", "raw", "map"
	Envelope                    bool
	ListField                   string // the array's member inside data, "" for data itself
	Paged                       bool   // the list takes a cursor
}

var methods = []string{"get", "post", "put", "patch", "delete"}

func main() {
	out := flag.String("o", "operations.gen.go", "output file")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: gen -o FILE openapi.json")
	}
	raw, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	var d doc
	if err := json.Unmarshal(raw, &d); err != nil {
		log.Fatal(err)
	}
	var ops []op
	for path, item := range d.Paths {
		var shared []param
		if p, ok := item["parameters"]; ok {
			if err := json.Unmarshal(p, &shared); err != nil {
				log.Fatalf("%s: %v", path, err)
			}
		}
		for _, m := range methods {
			rawOp, ok := item[m]
			if !ok {
				continue
			}
			var o operation
			if err := json.Unmarshal(rawOp, &o); err != nil {
				log.Fatalf("%s %s: %v", m, path, err)
			}
			g, err := d.build(strings.ToUpper(m), path, o, append(append([]param(nil), shared...), o.Parameters...))
			if err != nil {
				log.Fatalf("%s %s: %v", m, path, err)
			}
			ops = append(ops, g)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Name < ops[j].Name })
	sum := sha256.Sum256(raw)
	src := render(ops, hex.EncodeToString(sum[:]))
	formatted, err := format.Source(src)
	if err != nil {
		log.Fatalf("%v\n%s", err, src)
	}
	if err := os.WriteFile(*out, formatted, 0o644); err != nil {
		log.Fatal(err)
	}
}

func (d *doc) build(method, path string, o operation, params []param) (op, error) {
	if o.OperationID == "" {
		return op{}, fmt.Errorf("no operationId")
	}
	g := op{Name: exported(o.OperationID), Method: method, Path: path, Summary: o.Summary}
	for _, p := range params {
		if p.Ref != "" {
			p = d.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
		}
		switch p.In {
		case "path":
		case "query", "header":
			g.Params = true
			if p.In == "query" && p.Name == "cursor" {
				g.Paged = true
			}
		}
	}
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") {
			name := strings.Trim(seg, "{}")
			g.PathNames = append(g.PathNames, name)
			g.PathArgs = append(g.PathArgs, goName(name))
		}
	}
	if rb := o.RequestBody; rb != nil {
		if c, ok := rb.Content["application/json"]; ok {
			if d.hasProperties(c.Schema) {
				g.Body = "json"
			}
		} else if _, ok := rb.Content["application/x-www-form-urlencoded"]; ok {
			g.Body = "form"
		} else {
			return op{}, fmt.Errorf("request body of an unknown type")
		}
	}
	codes := make([]string, 0, len(o.Responses))
	for c := range o.Responses {
		if strings.HasPrefix(c, "2") {
			codes = append(codes, c)
		}
	}
	sort.Strings(codes)
	g.Kind = "raw"
	if len(codes) > 0 {
		content := o.Responses[codes[0]].Content
		if c, ok := content["application/json"]; ok && len(content) == 1 {
			if err := d.answer(&g, c.Schema); err != nil {
				return op{}, err
			}
		}
	}
	return g, nil
}

// answer sets what the operation returns from its JSON answer's schema.
func (d *doc) answer(g *op, s schema) error {
	if all, ok := s["allOf"].([]any); ok && len(all) == 2 && ref(schema(all[0].(map[string]any))) == "Envelope" {
		g.Envelope = true
		props, _ := all[1].(map[string]any)["properties"].(map[string]any)
		data, ok := props["data"].(map[string]any)
		if !ok {
			return fmt.Errorf("an envelope without data")
		}
		return d.data(g, schema(data))
	}
	if r := ref(s); r != "" {
		g.Kind, g.Result = "object", r
		return nil
	}
	if s["type"] == "object" {
		g.Kind = "map"
		return nil
	}
	return fmt.Errorf("an answer of an unknown shape: %v", s)
}

func (d *doc) data(g *op, s schema) error {
	if r := ref(s); r != "" {
		g.Kind, g.Result = "object", r
		return nil
	}
	if s["type"] == "array" {
		return d.list(g, "", s)
	}
	if s["type"] == "object" {
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			if p.(map[string]any)["type"] == "array" {
				return d.list(g, name, schema(p.(map[string]any)))
			}
		}
	}
	return fmt.Errorf("data of an unknown shape: %v", s)
}

func (d *doc) list(g *op, field string, s schema) error {
	item, _ := s["items"].(map[string]any)
	r := ref(schema(item))
	if r == "" {
		return fmt.Errorf("a list of unnamed items")
	}
	g.Kind, g.Result, g.ListField = "list", r, field
	return nil
}

func (d *doc) hasProperties(s schema) bool {
	if r := ref(s); r != "" {
		return d.hasProperties(d.Components.Schemas[r])
	}
	if p, ok := s["properties"].(map[string]any); ok && len(p) > 0 {
		return true
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		if subs, ok := s[k].([]any); ok {
			for _, sub := range subs {
				if d.hasProperties(schema(sub.(map[string]any))) {
					return true
				}
			}
		}
	}
	return false
}

func ref(s schema) string {
	r, _ := s["$ref"].(string)
	return strings.TrimPrefix(r, "#/components/schemas/")
}

func exported(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// goName turns a path parameter's name into a Go identifier.
func goName(s string) string {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' })
	for i := 1; i < len(parts); i++ {
		parts[i] = exported(parts[i])
	}
	return strings.Join(parts, "")
}

func render(ops []op, docSum string) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by client/internal/gen from httpapi/openapi.json. DO NOT EDIT.\n\npackage client\n\n")
	b.WriteString("import (\n\"context\"\n\"iter\"\n\"net/url\"\n)\n\n")

	fmt.Fprintf(&b, "// documentSHA256 is the SHA-256 of the document this file and types.gen.go\n// were generated from.\nconst documentSHA256 = %q\n\n", docSum)
	b.WriteString("// operations lists every operationId of the document this client was\n// generated from, for the test that checks the client covers them all.\nvar operations = []string{\n")
	for _, o := range ops {
		fmt.Fprintf(&b, "%q,\n", o.Name)
	}
	b.WriteString("}\n\n")
	for _, o := range ops {
		var args []string
		args = append(args, "ctx context.Context")
		for _, a := range o.PathArgs {
			args = append(args, a+" string")
		}
		switch o.Body {
		case "json":
			args = append(args, "body "+o.Name+"JSONRequestBody")
		case "form":
			args = append(args, "body "+o.Name+"FormdataRequestBody")
		}
		if o.Params {
			args = append(args, "params *"+o.Name+"Params")
		}
		path := fmt.Sprintf("%q", o.Path)
		for i, n := range o.PathNames {
			path = strings.Replace(path, "{"+n+"}", `"+url.PathEscape(`+o.PathArgs[i]+`)+"`, 1)
		}
		path = strings.TrimSuffix(strings.TrimPrefix(path, `""+`), `+""`)
		fields := []string{fmt.Sprintf("method: %q", o.Method), "path: " + path}
		if o.Params {
			fields = append(fields, "params: params")
		}
		switch o.Body {
		case "json":
			fields = append(fields, "body: body")
		case "form":
			fields = append(fields, "body: body", "form: true")
		}
		if o.Envelope {
			fields = append(fields, "envelope: true")
		}
		summary := strings.TrimSuffix(o.Summary, ".")
		if summary != "" {
			summary = ": " + lowerFirst(summary)
		}
		call := "&call{" + strings.Join(fields, ", ") + "}"
		sig := strings.Join(args, ", ")
		switch o.Kind {
		case "object":
			fmt.Fprintf(&b, "// %s calls %s %s%s.\nfunc (c *Client) %s(%s) (*%s, error) {\n\tvar out %s\n\tif err := c.do(ctx, %s, &out); err != nil {\n\t\treturn nil, err\n\t}\n\treturn &out, nil\n}\n\n",
				o.Name, o.Method, o.Path, summary, o.Name, sig, o.Result, o.Result, call)
		case "map":
			fmt.Fprintf(&b, "// %s calls %s %s%s.\nfunc (c *Client) %s(%s) (map[string]any, error) {\n\tvar out map[string]any\n\tif err := c.do(ctx, %s, &out); err != nil {\n\t\treturn nil, err\n\t}\n\treturn out, nil\n}\n\n",
				o.Name, o.Method, o.Path, summary, o.Name, sig, call)
		case "raw":
			fmt.Fprintf(&b, "// %s calls %s %s%s, and returns the answer as it is (a page for a browser, or a file).\nfunc (c *Client) %s(%s) (*RawResponse, error) {\n\treturn c.send(ctx, %s)\n}\n\n",
				o.Name, o.Method, o.Path, summary, o.Name, sig, call)
		case "list":
			lc := strings.TrimSuffix(call, "}") + fmt.Sprintf(", list: %q", o.ListField) + "}"
			fmt.Fprintf(&b, "// %s calls %s %s%s, and yields every item, following the cursor from page to page.\nfunc (c *Client) %s(%s) iter.Seq2[%s, error] {\n\treturn all[%s](ctx, c, %s, %v)\n}\n\n",
				o.Name, o.Method, o.Path, summary, o.Name, sig, o.Result, o.Result, lc, o.Paged)
			fmt.Fprintf(&b, "// %sPage calls %s %s once and returns that page.\nfunc (c *Client) %sPage(%s) (*Page[%s], error) {\n\treturn page[%s](ctx, c, %s)\n}\n\n",
				o.Name, o.Method, o.Path, o.Name, sig, o.Result, o.Result, lc)
		}
	}
	return b.Bytes()
}

func lowerFirst(s string) string {
	if len(s) > 1 && 'A' <= s[1] && s[1] <= 'Z' {
		return s // an initialism
	}
	return strings.ToLower(s[:1]) + s[1:]
}
