package boltfrontier

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	bolt "go.etcd.io/bbolt"
)

// Every value of the state file (format version 3) but the meta bucket's
// format and version ends with a CRC-32C of its key and itself, so that
// damage within a record, which bbolt's pages do not checksum, is found:
// Open reads every record and refuses a file with one damaged, and a read
// of a record checks it again.

// castagnoli is the CRC-32C table (hardware-assisted on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sealLen is the length of a record's checksum.
const sealLen = 4

// errDamaged is wrapped by the error of a record whose checksum fails.
var errDamaged = errors.New("damaged record (its checksum does not match)")

// sum returns the checksum of the record k, v.
func sum(k, v []byte) uint32 {
	return crc32.Update(crc32.Checksum(k, castagnoli), castagnoli, v)
}

// seal returns v with its checksum appended, in a new slice.
func seal(k, v []byte) []byte {
	out := make([]byte, len(v), len(v)+sealLen)
	copy(out, v)
	return binary.LittleEndian.AppendUint32(out, sum(k, v))
}

// unseal checks the record k, v and returns v without its checksum, or an
// error wrapping errDamaged that names the bucket and key.
func unseal(bucket, k, v []byte) ([]byte, error) {
	n := len(v) - sealLen
	if n < 0 || binary.LittleEndian.Uint32(v[n:]) != sum(k, v[:n]) {
		return nil, fmt.Errorf("bucket %s, key %q: %w", bucket, k, errDamaged)
	}
	return v[:n:n], nil
}

// put stores v under k in b, sealed.
func put(b *bolt.Bucket, k, v []byte) error { return b.Put(k, seal(k, v)) }

// get reads the value of k in b, checked; nil, nil if there is none.
func get(b *bolt.Bucket, name, k []byte) ([]byte, error) {
	v := b.Get(k)
	if v == nil {
		return nil, nil
	}
	return unseal(name, k, v)
}

// unsealed reports whether the record k of bucket is written without a
// checksum: the meta bucket's format and version, which Open reads before
// it knows the version.
func unsealed(bucket, k []byte) bool {
	return bytes.Equal(bucket, bucketMeta) && (bytes.Equal(k, metaFormat) || bytes.Equal(k, metaVersion))
}

// checkRecords reads every record of the file, as Open does before it
// loads anything, and returns the first damaged one's error.
func checkRecords(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		b := tx.Bucket(name)
		if b == nil {
			return fmt.Errorf("bucket %q missing", name)
		}
		err := b.ForEach(func(k, v []byte) error {
			if v == nil {
				return fmt.Errorf("bucket %s, key %q: a bucket, not a record", name, k)
			}
			if unsealed(name, k) {
				return nil
			}
			_, err := unseal(name, k, v)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// sealAll seals every record of a file of format version 2, in tx, a
// few thousand at a time.
func sealAll(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		b := tx.Bucket(name)
		if b == nil {
			return fmt.Errorf("bucket %q missing", name)
		}
		if bytes.Equal(name, bucketSeenLog) {
			b.FillPercent = 1
		}
		type kv struct{ k, v []byte }
		batch := make([]kv, 0, 4096)
		var after []byte
		for {
			batch = batch[:0]
			c := b.Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			for ; k != nil && len(batch) < cap(batch); k, v = c.Next() {
				if v != nil && !unsealed(name, k) {
					batch = append(batch, kv{bytes.Clone(k), seal(k, v)})
				}
				after = append(after[:0], k...)
			}
			if k == nil && len(batch) == 0 {
				break
			}
			for _, r := range batch {
				if err := b.Put(r.k, r.v); err != nil {
					return err
				}
			}
			if k == nil {
				break
			}
		}
	}
	return nil
}
