package main

import (
	"bytes"
	"strings"
	"testing"
)

const small = `{
  "openapi": "3.0.3",
  "info": {"title": "Pets <b>", "version": "2", "description": "A <script>alert(1)</script> API"},
  "tags": [{"name": "pets", "description": "Pets & owners"}],
  "paths": {
    "/pets": {
      "get": {"operationId": "listPets", "tags": ["pets"], "summary": "List pets",
        "parameters": [{"name": "limit", "in": "query", "required": false,
          "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}}],
        "responses": {"200": {"description": "The pets", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}}},
          "404": {"$ref": "#/components/responses/NotFound"}}},
      "post": {"operationId": "addPet", "tags": ["pets"], "security": [],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
        "responses": {"201": {"description": "Added"}}}
    },
    "/ping": {"get": {"operationId": "ping", "responses": {"200": {"description": "pong"}}}}
  },
  "components": {
    "schemas": {"Pet": {"type": "object", "required": ["kind"], "properties": {
      "kind": {"type": "string", "enum": ["cat", "dog"]},
      "name": {"type": "string", "nullable": true, "maxLength": 64, "pattern": "^[a-z]+$"}}}},
    "responses": {"NotFound": {"description": "No such pet", "content": {"application/json": {"schema": {"type": "object"}}}}}
  }
}`

// TestRender checks the page of a small document: escaped text, a section
// per tag and one for the untagged, an element per operation, constraints,
// enums, required and nullable marks, and $refs as in-page links.
func TestRender(t *testing.T) {
	got, err := render([]byte(small))
	if err != nil {
		t.Fatal(err)
	}
	page := string(got)
	for _, want := range []string{
		`<title>Pets &lt;b&gt; API reference (version 2)</title>`,
		`A &lt;script&gt;alert(1)&lt;/script&gt; API`,
		`<section class="tag" id="tag-pets">` + "\n<h2>pets</h2>",
		`Pets &amp; owners`,
		`<section class="tag" id="tag-Other">` + "\n<h2>Other</h2>",
		`<article class="op" id="listPets">`, `<article class="op" id="addPet">`, `<article class="op" id="ping">`,
		`minimum <code>1</code>; maximum <code>100</code>; default <code>20</code>`,
		`array of <a href="#schema-Pet">Pet</a>`,
		`<article class="component" id="schema-Pet">`,
		`<code>&#34;cat&#34;</code> <code>&#34;dog&#34;</code>`,
		`max length <code>64</code>; pattern <code>^[a-z]&#43;$</code>`,
		`<a href="#response-NotFound">NotFound</a>`,
		`<span class="flag">no key</span>`,
		`<span class="flag">nullable</span>`,
		`<code>kind</code> <span class="flag req">required</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") || strings.Index(page, `id="tag-Other"`) < strings.Index(page, `id="tag-pets"`) {
		t.Error("a script on the page, or the untagged operations not last")
	}
	for range 5 { // maps iterate in another order each time
		again, err := render([]byte(small))
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("a second rendering differs (%v)", err)
		}
	}
}

// TestRenderRefuses checks that a document the page could not link whole
// is refused with the reason.
func TestRenderRefuses(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{`"$ref": "#/components/schemas/Pet"}}}}`, `"$ref": "#/components/schemas/Cat"}}}}`, `no schema "Cat"`},
		{`"operationId": "ping"`, `"operationId": "listPets"`, `same anchor "listPets"`},
		{`"#/components/responses/NotFound"`, `"other.json#/NotFound"`, `unsupported $ref`},
	} {
		doc := strings.Replace(small, c.from, c.to, 1)
		if doc == small {
			t.Fatalf("%q is not in the document", c.from)
		}
		if _, err := render([]byte(doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.to, err, c.want)
		}
	}
}
