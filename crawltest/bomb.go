package crawltest

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
)

// bombUnit is the size of the stretch of zeros a deflate bomb repeats.
const bombUnit = 1 << 20

// Bomb returns a decompression bomb: a handler that sends 200, text/html,
// a Content-Encoding of coding and a small body that decodes to size zero
// bytes, whatever the request's Accept-Encoding says. The codings are:
//
//   - "gzip": a gzip member (RFC 1952) of about size/1000 bytes.
//   - "deflate": a zlib stream (RFC 1950), as HTTP's "deflate" means.
//   - "zstd": a zstd frame (RFC 8878) of RLE blocks, about size/32000 bytes.
//
// An http.Transport decodes gzip by itself only when it added
// "Accept-Encoding: gzip" to the request itself (the caller set no
// Accept-Encoding and DisableCompression is false), and never decodes
// deflate or zstd: the client sees those encoded. The body is built once,
// here, at the cost of a CRC-32 over size bytes for gzip. Bomb panics for
// another coding or a negative size.
func Bomb(coding string, size int64) http.Handler {
	if size < 0 {
		panic(fmt.Sprintf("crawltest: Bomb of %d bytes", size))
	}
	var parts [][]byte // the body is parts[0], parts[1] reps times, parts[2:]...
	var reps int64
	switch coding {
	case "gzip", "deflate":
		unit, rest, end := deflateZeros(size)
		reps = size / bombUnit
		if coding == "gzip" {
			// Header: magic, deflate, no flags, no mtime, no extra flags,
			// unknown OS.
			head := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}
			tail := binary.LittleEndian.AppendUint32(nil, crcZeros(size))
			tail = binary.LittleEndian.AppendUint32(tail, uint32(size))
			parts = [][]byte{head, unit, rest, end, tail}
		} else {
			// CMF 0x78 (deflate, 32 KiB window), FLG 0xda (best
			// compression, check bits); the Adler-32 of n zeros is
			// s1 = 1, s2 = n mod 65521.
			head := []byte{0x78, 0xda}
			tail := binary.BigEndian.AppendUint32(nil, uint32(size%65521)<<16|1)
			parts = [][]byte{head, unit, rest, end, tail}
		}
	case "zstd":
		parts, reps = zstdZeros(size)
	default:
		panic(fmt.Sprintf("crawltest: Bomb with unknown coding %q", coding))
	}
	length := int64(0)
	for i, p := range parts {
		if i == 1 {
			length += reps * int64(len(p))
		} else {
			length += int64(len(p))
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", coding)
		w.Header().Set("Content-Length", strconv.FormatInt(length, 10))
		w.WriteHeader(http.StatusOK)
		for i, p := range parts {
			n := int64(1)
			if i == 1 {
				n = reps
			}
			for range n {
				if _, err := w.Write(p); err != nil {
					return
				}
			}
		}
	})
}

// deflateZeros returns three pieces of a raw deflate stream of size zeros:
// unit, byte-aligned blocks decoding to bombUnit zeros, to be repeated
// size/bombUnit times (nil if that is 0); rest, blocks decoding to the remaining zeros; and
// end, an empty final block. Each piece is compressed with no history, so
// it refers back only within itself and may follow any output.
func deflateZeros(size int64) (unit, rest, end []byte) {
	zeros := make([]byte, bombUnit)
	compress := func(n int, final bool) []byte {
		var buf bytes.Buffer
		fw, _ := flate.NewWriter(&buf, flate.BestCompression) // the level is valid
		fw.Write(zeros[:n])
		if final {
			fw.Close()
		} else {
			fw.Flush() // ends on a byte boundary, with a non-final block
		}
		return buf.Bytes()
	}
	if size >= bombUnit {
		unit = compress(bombUnit, false)
	}
	if r := size % bombUnit; r > 0 {
		rest = compress(int(r), false)
	}
	return unit, rest, compress(0, true)
}

// crcZeros returns the CRC-32 (IEEE) of size zeros.
func crcZeros(size int64) uint32 {
	zeros := make([]byte, bombUnit)
	var c uint32
	for size > 0 {
		n := min(size, bombUnit)
		c = crc32.Update(c, crc32.IEEETable, zeros[:n])
		size -= n
	}
	return c
}

// zstdZeros returns the parts of a zstd frame of size zeros, in the
// layout Bomb writes, and how many times the second part repeats: a frame
// header, then RLE blocks of 128 KiB, a last RLE block of the rest and no
// checksum.
func zstdZeros(size int64) ([][]byte, int64) {
	const maxBlock = 128 << 10
	// Magic number; frame header descriptor 0 (no content size, not a
	// single segment, no checksum, no dictionary); window descriptor
	// 0x38, a 128 KiB window (exponent 7, mantissa 0), which bounds a
	// block to 128 KiB.
	head := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38}
	block := func(n int64, last bool) []byte {
		h := uint32(n)<<3 | 1<<1 // block size, block type 1 (RLE)
		if last {
			h |= 1
		}
		return []byte{byte(h), byte(h >> 8), byte(h >> 16), 0}
	}
	reps := size / maxBlock
	rest := size % maxBlock
	if reps > 0 && rest == 0 {
		// The last full block is the last block.
		return [][]byte{head, block(maxBlock, false), block(maxBlock, true)}, reps - 1
	}
	return [][]byte{head, block(maxBlock, false), block(rest, true)}, reps
}
