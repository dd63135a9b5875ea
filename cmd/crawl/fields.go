package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/andybalholm/cascadia"
	"github.com/asyncrawl/crawl"
	"github.com/asyncrawl/crawl/scrape"
)

// fieldSet is the fields -select takes from each HTML page, for the
// page's JSON line. It is the flag's value: each -select given compiles its
// selector, so that a bad one stops the command before any fetch.
//
// The page hook (hook) parses the page once and takes each field's first
// match, then keeps the page's fields until its Result comes to the result
// hook, which takes them: the crawler calls both for a URL on one worker,
// the page hook first. It is safe for concurrent use.
type fieldSet struct {
	fields []field // in the order given

	mu sync.Mutex
	// pending maps a page URL's key (crawl.URLKey) to its fields. A
	// page whose Result this process does not deliver (its lease lost
	// to another -redis process, or its outcome not recorded by the
	// frontier) leaves its fields here: a few, in a rare case.
	pending map[string]map[string]string
}

// field is one -select: the text of the first element m matches, or with
// attr that element's attribute.
type field struct {
	name, attr string
	m          cascadia.Selector
}

func newFieldSet() *fieldSet {
	return &fieldSet{pending: map[string]map[string]string{}}
}

func (fs *fieldSet) String() string {
	if fs == nil {
		return ""
	}
	names := make([]string, len(fs.fields))
	for i, f := range fs.fields {
		names[i] = f.name
	}
	return strings.Join(names, " ")
}

// Set adds the field of a -select NAME=SELECTOR or NAME=SELECTOR@ATTR.
func (fs *fieldSet) Set(s string) error {
	name, spec, ok := strings.Cut(s, "=")
	switch {
	case !ok:
		return errors.New("want NAME=SELECTOR or NAME=SELECTOR@ATTR")
	case name == "":
		return errors.New("empty NAME: want NAME=SELECTOR or NAME=SELECTOR@ATTR")
	}
	for _, f := range fs.fields {
		if f.name == name {
			return fmt.Errorf("field %q given twice", name)
		}
	}
	selector, attr := splitAttr(spec)
	m, err := cascadia.Compile(selector)
	if err != nil {
		return &scrape.SelectorError{Selector: selector, Err: err}
	}
	fs.fields = append(fs.fields, field{name: name, attr: attr, m: m})
	return nil
}

// splitAttr splits the SELECTOR@ATTR of a -select at its last "@" when
// what follows is an attribute name (a letter or "_", then letters,
// digits, "-", "_", ":" or ".") and what comes before neither is empty
// nor ends in a backslash (an escaped "@"). Else all of it is the
// selector: an "@" in an attribute selector's value, as in a[href*="@"],
// is followed by a quote or a "]".
func splitAttr(spec string) (selector, attr string) {
	i := strings.LastIndexByte(spec, '@')
	if i <= 0 || spec[i-1] == '\\' || !isAttrName(spec[i+1:]) {
		return spec, ""
	}
	// HTML's attribute names are lower case once parsed: @CONTENT is
	// @content.
	return spec[:i], strings.ToLower(spec[i+1:])
}

func isAttrName(s string) bool {
	for i, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
		case i > 0 && ('0' <= c && c <= '9' || c == '-' || c == ':' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// empty reports whether no -select was given.
func (fs *fieldSet) empty() bool { return len(fs.fields) == 0 }

// hook is the page hook: it parses an HTML page once (scrape.Document) and
// takes each field's first match, white space collapsed. A page fetched
// again (its Result not delivered the first time: an Ack that failed, a
// lease lost and given back to this process) replaces the fields of the
// fetch before, so that a field this fetch did not match is not taken
// from that one.
func (fs *fieldSet) hook(p *crawl.Page) {
	var m map[string]string
	if doc, ok := scrape.Document(p); ok {
		for _, f := range fs.fields {
			first := doc.FindMatcher(f.m).First()
			if first.Length() == 0 {
				continue
			}
			var v string
			if f.attr == "" {
				v = scrape.Collapse(first.Text())
			} else {
				v = scrape.Collapse(first.AttrOr(f.attr, ""))
			}
			if v == "" {
				continue
			}
			if m == nil {
				m = make(map[string]string, len(fs.fields))
			}
			m[f.name] = v
		}
	}
	key := crawl.URLKey(p.URL.String())
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if m == nil {
		delete(fs.pending, key)
	} else {
		fs.pending[key] = m
	}
}

// take returns the fields of the page of the Result for u and forgets
// them; nil when it had none.
func (fs *fieldSet) take(u string) map[string]string {
	if fs.empty() {
		return nil
	}
	key := crawl.URLKey(u)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	m := fs.pending[key]
	delete(fs.pending, key)
	return m
}
