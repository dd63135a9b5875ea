package robots

import (
	"testing"
)

// hostilePaths are the paths BenchmarkRobotsHostile asks about: "typical"
// ones, which lack letters that most wildcard rules need, and an
// "adversarial" one, which has every letter in order but no rule's last
// letter at its end, so that every anchored wildcard rule of the file
// passes the matcher's filters and is matched to the end, and fails: the
// worst case of both matchers.
var hostilePaths = map[string][]string{
	"typical": {
		"/p/1234.html",
		"/",
		"/articles/2024/05/some-long-article-title-with-words?utm_source=x&utm_medium=y",
		"/search?q=robots+txt&hl=en",
		"/%7Euser/caf%C3%A9/index.html",
		"/k3x9/q2m7/other",
	},
	"adversarial": {
		"/abcdefghijklmnopqrstuvwxyz/",
	},
}

// BenchmarkRobotsHostile measures the cost of deciding one URL against a
// hostile robots.txt of 500 KiB, for the matcher robotsMatcher replaced
// ("before", refRobots) and robotsMatcher ("after"). ns/op is per URL.
//
//	go test -run '^$' -bench RobotsHostile -benchtime 2000x ./internal/robots/
func BenchmarkRobotsHostile(b *testing.B) {
	for _, kind := range []string{"wildcard", "prefix", "mix"} {
		body := Hostile(kind)
		rules, _, _ := readRobots(body, userAgent, maxDelay)
		deciders := []struct {
			name    string
			allowed func(string) bool
		}{
			{"before", newRefRobots(rules).allowed},
			{"after", Parse(body, userAgent, maxDelay).Allowed},
		}
		for _, set := range []string{"typical", "adversarial"} {
			paths := hostilePaths[set]
			for _, p := range paths {
				if got, want := deciders[1].allowed(p), deciders[0].allowed(p); got != want {
					b.Fatalf("%s file: allowed(%q) = %v, want %v as before", kind, p, got, want)
				}
			}
			for _, d := range deciders {
				b.Run(kind+"/"+set+"/"+d.name, func(b *testing.B) {
					b.ReportAllocs()
					b.ReportMetric(float64(len(rules)), "rules")
					i := 0
					for b.Loop() {
						d.allowed(paths[i%len(paths)])
						i++
					}
				})
			}
		}
	}
}

// BenchmarkParseRobotsHostile measures parsing and compiling the hostile
// files, done once per host.
func BenchmarkParseRobotsHostile(b *testing.B) {
	for _, kind := range []string{"wildcard", "prefix", "mix"} {
		body := Hostile(kind)
		b.Run(kind, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(body, userAgent, maxDelay)
			}
		})
	}
}
