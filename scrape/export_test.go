package scrape

// Parses returns how many documents Document has parsed so far.
func Parses() int64 { return parses.Load() }
