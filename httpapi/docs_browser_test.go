package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/corebanktest"
	"github.com/corebank/corebank/httpapi"
)

// TestDocsInBrowser opens GET /docs in a headless Chromium and checks that
// the page loads with its stylesheet (the Content-Security-Policy lets it
// through), shows every tag of openapi.json as a section heading, has an
// element whose id is each operationId, has no in-page link to nowhere,
// and wrote no error to the console: no console.error, no exception, no
// browser log entry at level error (where a CSP violation or a failed load
// would be).
func TestDocsInBrowser(t *testing.T) {
	browser := findBrowser(t)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string   `json:"operationId"`
			Tags        []string `json:"tags"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var tags, ids []string
	for _, item := range doc.Paths {
		for _, op := range item {
			ids = append(ids, op.OperationID)
			tags = append(tags, op.Tags...)
		}
	}
	slices.Sort(tags)
	tags = slices.Compact(tags)
	slices.Sort(ids)

	b := corebanktest.New(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 900)) // wide: the contents sit at the left
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
	defer cancel()

	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(ctx, func(ev any) {
		var p string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				p = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			p = "exception: " + ev.ExceptionDetails.Text
			if ex := ev.ExceptionDetails.Exception; ex != nil {
				p += " " + ex.Description
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				p = fmt.Sprintf("log (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		}
		if p != "" {
			mu.Lock()
			problems = append(problems, p)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("starting %s: %v", browser, err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(b.Server.URL+"/docs"), chromedp.WaitVisible(chromedp.ID("toc"))); err != nil {
		t.Fatalf("in the browser, opening /docs: %v", err)
	}
	eval := func(js string) []string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](js))
		if err != nil {
			t.Fatalf("in the browser, %s: %v", js, err)
		}
		return v
	}
	headings := eval(`Array.from(document.querySelectorAll("section.tag > h2"), h => h.textContent)`)
	for _, tag := range tags {
		if !slices.Contains(headings, tag) {
			t.Errorf("no section heading for tag %q (headings %q)", tag, headings)
		}
	}
	onPage := eval(`Array.from(document.querySelectorAll("section.tag > article.op"), e => e.id)`)
	slices.Sort(onPage)
	if diff := cmp.Diff(ids, onPage); diff != "" {
		t.Errorf("operationIds in openapi.json (-) versus operation elements' ids on the page (+):\n%s", diff)
	}
	if broken := eval(`Array.from(document.querySelectorAll('a[href^="#"]')).filter(a => !document.getElementById(decodeURIComponent(a.hash.slice(1)))).map(a => a.getAttribute("href"))`); len(broken) > 0 {
		t.Errorf("%d in-page links lead nowhere: %q", len(broken), broken[:min(len(broken), 10)])
	}
	// The stylesheet applied: the table of contents is fixed to the left.
	if pos := eval(`[getComputedStyle(document.getElementById("toc")).position, document.title]`); pos[0] != "fixed" || !strings.Contains(pos[1], "API reference") {
		t.Errorf("the page's style did not apply or the title is off: position %q, title %q", pos[0], pos[1])
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("in the browser's console: %s", p)
	}
}
