package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// document is the part of an OpenAPI 3.0 document the page shows.
type document struct {
	OpenAPI    string                                `json:"openapi"`
	Info       info                                  `json:"info"`
	Servers    []server                              `json:"servers"`
	Security   []map[string][]string                 `json:"security"`
	Tags       []tag                                 `json:"tags"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"` // methods, and "parameters", "summary", ...
	Components components                            `json:"components"`
}

type info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

type server struct {
	URL         string `json:"url"`
	Description string `json:"description"`
}

type tag struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type components struct {
	Schemas         map[string]*schema         `json:"schemas"`
	Responses       map[string]*response       `json:"responses"`
	Parameters      map[string]*parameter      `json:"parameters"`
	RequestBodies   map[string]*requestBody    `json:"requestBodies"`
	Headers         map[string]*header         `json:"headers"`
	SecuritySchemes map[string]*securityScheme `json:"securitySchemes"`
}

type securityScheme struct {
	Type         string `json:"type"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat"`
	Name         string `json:"name"`
	In           string `json:"in"`
	Description  string `json:"description"`
}

type operation struct {
	OperationID string                 `json:"operationId"`
	Tags        []string               `json:"tags"`
	Summary     string                 `json:"summary"`
	Description string                 `json:"description"`
	Deprecated  bool                   `json:"deprecated"`
	Security    *[]map[string][]string `json:"security"` // nil: the document's
	Parameters  []*parameter           `json:"parameters"`
	RequestBody *requestBody           `json:"requestBody"`
	Responses   map[string]*response   `json:"responses"`
}

type parameter struct {
	Ref         string  `json:"$ref"`
	Name        string  `json:"name"`
	In          string  `json:"in"`
	Required    bool    `json:"required"`
	Deprecated  bool    `json:"deprecated"`
	Description string  `json:"description"`
	Schema      *schema `json:"schema"`
}

type requestBody struct {
	Ref         string                `json:"$ref"`
	Description string                `json:"description"`
	Required    bool                  `json:"required"`
	Content     map[string]*mediaType `json:"content"`
}

type response struct {
	Ref         string                `json:"$ref"`
	Description string                `json:"description"`
	Headers     map[string]*header    `json:"headers"`
	Content     map[string]*mediaType `json:"content"`
}

type header struct {
	Ref         string  `json:"$ref"`
	Description string  `json:"description"`
	Schema      *schema `json:"schema"`
}

type mediaType struct {
	Schema *schema `json:"schema"`
}

// schema is an OpenAPI 3.0 schema object. Numbers and JSON values stay as
// the document writes them.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Title                string             `json:"title"`
	Description          string             `json:"description"`
	Nullable             bool               `json:"nullable"`
	ReadOnly             bool               `json:"readOnly"`
	WriteOnly            bool               `json:"writeOnly"`
	Deprecated           bool               `json:"deprecated"`
	Enum                 []json.RawMessage  `json:"enum"`
	Default              json.RawMessage    `json:"default"`
	Minimum              json.Number        `json:"minimum"`
	Maximum              json.Number        `json:"maximum"`
	ExclusiveMinimum     bool               `json:"exclusiveMinimum"`
	ExclusiveMaximum     bool               `json:"exclusiveMaximum"`
	MultipleOf           json.Number        `json:"multipleOf"`
	MinLength            *int               `json:"minLength"`
	MaxLength            *int               `json:"maxLength"`
	Pattern              string             `json:"pattern"`
	MinItems             *int               `json:"minItems"`
	MaxItems             *int               `json:"maxItems"`
	UniqueItems          bool               `json:"uniqueItems"`
	MinProperties        *int               `json:"minProperties"`
	MaxProperties        *int               `json:"maxProperties"`
	Items                *schema            `json:"items"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties *additional        `json:"additionalProperties"`
	AllOf                []*schema          `json:"allOf"`
	OneOf                []*schema          `json:"oneOf"`
	AnyOf                []*schema          `json:"anyOf"`
	Not                  *schema            `json:"not"`
}

// additional is additionalProperties: a boolean or a schema.
type additional struct {
	Allowed bool    // true, or a schema
	Schema  *schema // the values' schema, when one is given
}

func (a *additional) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "true":
		a.Allowed = true
		return nil
	case "false":
		return nil
	}
	a.Allowed, a.Schema = true, new(schema)
	return json.Unmarshal(b, a.Schema)
}

// compact is a JSON value on one line, as the page shows enum values and
// defaults.
func compact(v json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return string(v)
	}
	return b.String()
}

// parse reads an OpenAPI 3.0 document.
func parse(src []byte) (*document, error) {
	var d document
	if err := json.Unmarshal(src, &d); err != nil {
		return nil, fmt.Errorf("reading the document: %w", err)
	}
	return &d, nil
}
