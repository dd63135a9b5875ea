package robots

import (
	"math/rand/v2"
	"strings"
)

// Hostile returns a robots.txt for benchmarks, of user-agent * just under
// MaxSize (500 KiB), the most a crawler reads, of one kind:
//
//   - "wildcard": lines like "Disallow: /*a*bd*e*...*z$", each an
//     alphabetical run of letters in parts of one or two, anchored, none
//     alike; they all share the literal prefix "/", so no trie prunes
//     them;
//   - "prefix": plain prefix rules ("Disallow: /k3x9/q2m7/..."), none alike;
//   - "mix": the two alternated, with some wildcard rules under "/p/" (the
//     pages of the crawl benchmark's host) and some allows.
//
// The same kind gives the same file every time.
func Hostile(kind string) []byte {
	rng := rand.New(rand.NewPCG(9309, uint64(len(kind))+uint64(kind[0])<<8))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	wildcard := func(prefix string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for i := 0; i < len(letters); i++ {
			if rng.IntN(4) == 0 {
				continue // a letter left out, so that lines differ
			}
			b.WriteByte('*')
			b.WriteByte(letters[i])
			if rng.IntN(3) == 0 && i+1 < len(letters) {
				i++
				b.WriteByte(letters[i])
			}
		}
		b.WriteString("$")
		return b.String()
	}
	prefix := func() string {
		var b strings.Builder
		for range 2 + rng.IntN(4) {
			b.WriteByte('/')
			for range 2 + rng.IntN(6) {
				b.WriteByte(alnum[rng.IntN(len(alnum))])
			}
		}
		return b.String()
	}
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; ; i++ {
		var line string
		switch {
		case kind == "wildcard":
			line = "Disallow: " + wildcard("/")
		case kind == "prefix":
			line = "Disallow: " + prefix()
		case i%2 == 0:
			line = "Disallow: " + prefix()
		case i%10 == 1:
			line = "Disallow: " + wildcard("/p/")
		case i%10 == 3:
			line = "Allow: " + wildcard("/")
		default:
			line = "Disallow: " + wildcard("/")
		}
		if b.Len()+len(line)+1 > MaxSize {
			break
		}
		b.WriteString(line + "\n")
	}
	return []byte(b.String())
}
