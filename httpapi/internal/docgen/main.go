package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"html/template"
	"os"
	"strings"
)

//go:embed page.tmpl
var pageTmpl string

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{"lower": strings.ToLower}).Parse(pageTmpl))

func main() {
	out := flag.String("o", "", "the HTML file to write (required)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: docgen -o page.html openapi.json")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

// run renders the document at in into the file out.
func run(in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	html, err := render(src)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, html, 0o644)
}

// render is the page of an OpenAPI 3.0 document.
func render(src []byte) ([]byte, error) {
	d, err := parse(src)
	if err != nil {
		return nil, err
	}
	p, err := build(d)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
