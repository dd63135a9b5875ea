package boltfrontier

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/asyncrawl/crawl"
	bolt "go.etcd.io/bbolt"
)

// v1File copies testdata/v1.db.gz, a state file of format version 1
// written by the package as it was then, to a file in a fresh directory.
// Its crawl: roots "http://a.test/0"; 300 URLs http://h{i%3}.test/{i}
// pushed; three of them acked with a Result and a link each
// (http://h9.test/link-0 to -2), a fourth retried.
func v1File(t *testing.T) string {
	t.Helper()
	gz, err := os.Open(filepath.Join("testdata", "v1.db.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v1.db")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// v1URLs are the URLs the crawl of v1File has seen.
func v1URLs() []crawl.Request {
	var rs []crawl.Request
	for i := range 300 {
		rs = append(rs, crawl.Request{URL: fmt.Sprintf("http://h%d.test/%d", i%3, i)})
	}
	for i := range 3 {
		rs = append(rs, crawl.Request{URL: fmt.Sprintf("http://h9.test/link-%d", i)})
	}
	return rs
}

// TestMigrateV1 checks that Open turns a version 1 file into a version 2
// one holding the same crawl: the same URLs seen, queued and done, the
// same Results, and the seen bucket replaced by the seen log; and that
// the file opened again is the same crawl.
func TestMigrateV1(t *testing.T) {
	ctx := context.Background()
	path := v1File(t)
	for round := range 2 {
		f, err := Open(path, nil)
		if err != nil {
			t.Fatalf("round %d: Open: %v", round, err)
		}
		if n, err := f.Push(ctx, v1URLs()...); n != 0 || err != nil {
			t.Errorf("round %d: Push of the URLs seen: got %d new, %v; want 0, nil", round, n, err)
		}
		c, err := f.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := (crawl.Counts{Queued: 300 + round, Done: 3, Pages: 4}); c != want {
			t.Errorf("round %d: got Counts %+v, want %+v", round, c, want)
		}
		var results []string
		f.Results(ctx, func(r crawl.Result) bool { results = append(results, r.URL); return true })
		if len(results) != 3 {
			t.Errorf("round %d: got Results %q, want 3", round, results)
		}
		if round == 0 {
			if n, err := f.Push(ctx, crawl.Request{URL: "http://h0.test/new"}); n != 1 || err != nil {
				t.Errorf("Push of a new URL: got %d new, %v; want 1, nil", n, err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if v := getU64(tx.Bucket(bucketMeta).Get(metaVersion)); v != formatVersion {
			t.Errorf("got format version %d, want %d", v, formatVersion)
		}
		if tx.Bucket(bucketSeenV1) != nil {
			t.Errorf("bucket %q kept, want it deleted", bucketSeenV1)
		}
		n := 0
		tx.Bucket(bucketSeenLog).ForEach(func(k, v []byte) error { n += len(v) / 8; return nil })
		if n != 304 {
			t.Errorf("got %d fingerprints in the seen log, want 304", n)
		}
		return nil
	})
}

// TestMigrateV2 checks that Open turns a version 2 file (records without
// checksums) into a version 3 one holding the same crawl, every record
// sealed. The version 2 file is a crawl's file with its checksums cut off
// and its version set back, which is what version 2 wrote.
func TestMigrateV2(t *testing.T) {
	ctx := context.Background()
	path := v1File(t)
	f, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			b := tx.Bucket(name)
			var ks, vs [][]byte
			b.ForEach(func(k, v []byte) error {
				if !unsealed(name, k) {
					ks, vs = append(ks, bytes.Clone(k)), append(vs, bytes.Clone(v[:len(v)-sealLen]))
				}
				return nil
			})
			for i := range ks {
				if err := b.Put(ks[i], vs[i]); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(bucketMeta).Put(metaVersion, u64(2))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err = Open(path, nil)
	if err != nil {
		t.Fatalf("Open of a version 2 file: %v", err)
	}
	if n, err := f.Push(ctx, v1URLs()...); n != 0 || err != nil {
		t.Errorf("Push of the URLs seen: got %d new, %v; want 0, nil", n, err)
	}
	if c, err := f.Counts(ctx); err != nil || c != (crawl.Counts{Queued: 300, Done: 3, Pages: 4}) {
		t.Errorf("Counts %+v, %v; want 300 queued, 3 done, 4 pages", c, err)
	}
	var results []string
	f.Results(ctx, func(r crawl.Result) bool { results = append(results, r.URL); return true })
	if len(results) != 3 {
		t.Errorf("Results %q, want 3", results)
	}
	f.Close()
	db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if v := getU64(tx.Bucket(bucketMeta).Get(metaVersion)); v != formatVersion {
			t.Errorf("format version %d, want %d", v, formatVersion)
		}
		if err := checkRecords(tx); err != nil {
			t.Errorf("records after the migration: %v", err)
		}
		return nil
	})
}
