package boltfrontier

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
)

// checkPages reads the bbolt file r of size bytes page by page, with
// bounds checked at each read, and returns an error saying what is wrong
// with its structure, if anything: both meta pages, the freelist page if
// the file has one, and every page of every bucket's B+tree (ids within
// the file, each page reached once, its type, its elements within it,
// keys in order within each page and between a branch and its children,
// nested buckets' headers and inline pages).
//
// It checks what bbolt reads when it opens a file for writing, which it
// does in a goroutine of its own, where a panic on a damaged page cannot
// be recovered and would crash the program: rebuilding the freelist walks
// every bucket's tree (page ids, types, key order) and opens every nested
// bucket. A file it accepts can still hold damaged records (the values
// this package decodes), which the package's decoders refuse with errors.
//
// The layout is bbolt's (go.etcd.io/bbolt/internal/common), in the byte
// order of the machine, as bbolt writes it.
func checkPages(r io.ReaderAt, size int64) error {
	c := &pageChecker{r: r, size: size}
	return c.check()
}

func (c *pageChecker) check() error {
	m0, err := c.meta(0, 0)
	if err != nil {
		return err
	}
	c.pageSize = int64(m0.pageSize)
	m1, err := c.meta(1, c.pageSize)
	if err != nil {
		return err
	}
	if m1.pageSize != m0.pageSize {
		return fmt.Errorf("meta pages disagree on the page size: %d and %d", m0.pageSize, m1.pageSize)
	}
	c.m = m0 // the meta bbolt uses: the later one
	if m1.txid > m0.txid {
		c.m = m1
	}
	m := c.m
	c.hwm = m.pgid
	c.reached = make(map[uint64]bool)
	if m.freelist != noFreelist {
		if err := c.freelist(m.freelist); err != nil {
			return err
		}
	}
	_, err = c.tree(m.root, nil, nil, 0, "the root bucket", true)
	return err
}

// bbolt's file format, version 2.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16 // id uint64, flags uint16, count uint16, overflow uint32
	elemSize       = 16 // a branch element (pos, ksize uint32; pgid uint64) or a leaf's (flags, pos, ksize, vsize uint32)
	metaSize       = 64 // magic, version, pageSize, flags uint32; root, sequence, freelist, pgid, txid, checksum uint64
	bucketHeader   = 16 // root, sequence uint64; an inline bucket's page follows

	pageBranch   = 0x01
	pageLeaf     = 0x02
	pageMeta     = 0x04
	pageFreelist = 0x10
	leafBucket   = 0x01 // a leaf element that is a nested bucket

	noFreelist = ^uint64(0)

	// maxTreeDepth bounds the recursion over nested buckets and
	// branches; a tree of this package is a few levels deep.
	maxTreeDepth = 64
)

var ne = binary.NativeEndian

type pageChecker struct {
	r        io.ReaderAt
	size     int64
	pageSize int64
	m        metaPage        // the meta in use
	hwm      uint64          // the pages the meta says the file has
	reached  map[uint64]bool // the pages in use so far: each once
	free     map[uint64]bool // the freelist page's ids, if any
	bufs     []*pageBuf      // a page buffer per depth of the walk
}

type metaPage struct {
	pageSize                   uint32
	root, freelist, pgid, txid uint64
}

// meta reads and checks the meta page id at off.
func (c *pageChecker) meta(id uint64, off int64) (metaPage, error) {
	var m metaPage
	var b [pageHeaderSize + metaSize]byte
	if _, err := c.r.ReadAt(b[:], off); err != nil {
		return m, fmt.Errorf("meta page %d: %w", id, err)
	}
	h, p := b[:pageHeaderSize], b[pageHeaderSize:]
	if ne.Uint32(p[0:]) != boltMagic {
		return m, fmt.Errorf("meta page %d: not a bbolt meta page (magic %#x)", id, ne.Uint32(p[0:]))
	}
	if v := ne.Uint32(p[4:]); v != boltVersion {
		return m, fmt.Errorf("meta page %d: bbolt format version %d, want %d", id, v, boltVersion)
	}
	sum := fnv.New64a()
	sum.Write(p[:metaSize-8])
	if got := ne.Uint64(p[metaSize-8:]); got != sum.Sum64() {
		return m, fmt.Errorf("meta page %d: checksum %#x, its bytes sum to %#x (a torn or damaged meta page)", id, got, sum.Sum64())
	}
	if pid, flags := ne.Uint64(h[0:]), ne.Uint16(h[8:]); pid != id || flags != pageMeta {
		return m, fmt.Errorf("meta page %d: header says page %d of type %#x", id, pid, flags)
	}
	m = metaPage{
		pageSize: ne.Uint32(p[8:]),
		root:     ne.Uint64(p[16:]),
		freelist: ne.Uint64(p[32:]),
		pgid:     ne.Uint64(p[40:]),
		txid:     ne.Uint64(p[48:]),
	}
	if m.pageSize < 1<<10 || m.pageSize > 1<<16 || bits.OnesCount32(m.pageSize) != 1 {
		return m, fmt.Errorf("meta page %d: page size %d", id, m.pageSize)
	}
	ps := uint64(m.pageSize)
	if m.pgid < 4 || m.pgid > uint64(c.size)/ps {
		return m, fmt.Errorf("truncated: meta page %d says %d pages of %d bytes, the file has %d bytes", id, m.pgid, ps, c.size)
	}
	if m.root < 2 || m.root >= m.pgid {
		return m, fmt.Errorf("meta page %d: root page %d, outside pages 2 to %d", id, m.root, m.pgid-1)
	}
	if m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid || m.freelist == m.root) {
		return m, fmt.Errorf("meta page %d: freelist page %d, outside pages 2 to %d", id, m.freelist, m.pgid-1)
	}
	return m, nil
}

// page reads the page id into c's buffer for depth, checking that it is
// within the file, that its header names it, and that no page of it was
// reached before, and marks its pages reached. Its overflow pages are
// read only when an element lies in them (c.whole).
func (c *pageChecker) page(id uint64, depth int) (*pageBuf, error) {
	if id < 2 || id >= c.hwm {
		return nil, fmt.Errorf("page %d: outside pages 2 to %d", id, c.hwm-1)
	}
	for len(c.bufs) <= depth {
		c.bufs = append(c.bufs, &pageBuf{})
	}
	p := c.bufs[depth]
	p.id, p.off = id, int64(id)*c.pageSize
	p.b = append(p.b[:0], make([]byte, c.pageSize)...)
	if _, err := c.r.ReadAt(p.b, p.off); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if pid := ne.Uint64(p.b); pid != id {
		return nil, fmt.Errorf("page %d: its header says page %d", id, pid)
	}
	overflow := uint64(ne.Uint32(p.b[12:]))
	if overflow >= c.hwm-id {
		return nil, fmt.Errorf("page %d: %d overflow pages, past the file's %d pages", id, overflow, c.hwm)
	}
	p.size = int64(overflow+1) * c.pageSize
	for i := range overflow + 1 {
		if c.reached[id+i] {
			return nil, fmt.Errorf("page %d: reached twice (a page of two trees, or a cycle)", id+i)
		}
		if c.free[id+i] {
			return nil, fmt.Errorf("page %d: in use and in the freelist", id+i)
		}
		c.reached[id+i] = true
	}
	return p, nil
}

// pageBuf is a page read, its first page at least.
type pageBuf struct {
	id   uint64
	off  int64 // in the file
	size int64 // with its overflow pages
	b    []byte
}

// upTo returns the page's first end bytes (end at most p.size), reading
// its overflow pages if they are not read yet.
func (p *pageBuf) upTo(r io.ReaderAt, end uint64) ([]byte, error) {
	if end > uint64(len(p.b)) {
		n := len(p.b)
		p.b = append(p.b, make([]byte, p.size-int64(n))...)
		if _, err := r.ReadAt(p.b[n:], p.off+int64(n)); err != nil {
			return nil, fmt.Errorf("page %d: %w", p.id, err)
		}
	}
	return p.b[:end], nil
}

// freelist reads the freelist page id.
func (c *pageChecker) freelist(id uint64) error {
	p, err := c.page(id, 0)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	b, err := p.upTo(c.r, uint64(p.size))
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	if flags := ne.Uint16(b[8:]); flags != pageFreelist {
		return fmt.Errorf("freelist page %d: type %#x, want %#x", id, flags, pageFreelist)
	}
	ids := b[pageHeaderSize:]
	n := uint64(ne.Uint16(b[10:]))
	if n == 0xFFFF { // the count is the first id
		if len(ids) < 8 {
			return fmt.Errorf("freelist page %d: no room for its count", id)
		}
		n, ids = ne.Uint64(ids), ids[8:]
	}
	if n > uint64(len(ids))/8 {
		return fmt.Errorf("freelist page %d: %d ids, room for %d", id, n, len(ids)/8)
	}
	c.free = make(map[uint64]bool, n)
	for i := range n {
		f := ne.Uint64(ids[8*i:])
		if f < 2 || f >= c.hwm {
			return fmt.Errorf("freelist page %d: free page %d, outside pages 2 to %d", id, f, c.hwm-1)
		}
		if c.free[f] {
			return fmt.Errorf("freelist page %d: page %d free twice", id, f)
		}
		c.free[f] = true
	}
	return nil
}

// pageElems is the elements of a branch or leaf page, each checked to
// lie within it.
type pageElems struct {
	p      *pageBuf
	r      io.ReaderAt
	branch bool
	n      int
}

// elems checks the type and element count of page p.
func elems(r io.ReaderAt, p *pageBuf) (pageElems, error) {
	typ, n := ne.Uint16(p.b[8:]), int(ne.Uint16(p.b[10:]))
	e := pageElems{p: p, r: r, branch: typ == pageBranch, n: n}
	if typ != pageBranch && typ != pageLeaf {
		return e, fmt.Errorf("type %#x, want a branch (%#x) or a leaf (%#x)", typ, pageBranch, pageLeaf)
	}
	if e.branch && n == 0 {
		return e, errors.New("a branch without elements")
	}
	if int64(pageHeaderSize+n*elemSize) > p.size {
		return e, fmt.Errorf("%d elements, room for %d", n, (p.size-pageHeaderSize)/elemSize)
	}
	if _, err := p.upTo(r, uint64(pageHeaderSize+n*elemSize)); err != nil {
		return e, err
	}
	// bbolt writes a page's keys and values one after the other, from
	// the end of its elements (node.write): an element that starts
	// elsewhere was not written so. A count lowered by one (a flipped
	// bit) leaves a page otherwise whole, its last record unseen: its
	// first key then starts an element's size after the elements' end.
	off := uint64(pageHeaderSize + n*elemSize)
	for i := range n {
		b := p.b[pageHeaderSize+i*elemSize:]
		var pos, size uint64
		if e.branch {
			pos, size = uint64(ne.Uint32(b)), uint64(ne.Uint32(b[4:]))
		} else {
			pos, size = uint64(ne.Uint32(b[4:])), uint64(ne.Uint32(b[8:]))+uint64(ne.Uint32(b[12:]))
		}
		if start := uint64(pageHeaderSize+i*elemSize) + pos; start != off {
			return e, fmt.Errorf("element %d of %d starts at byte %d, not at %d where the one before ends (a count or an element damaged)", i, n, start, off)
		}
		off += size
	}
	return e, nil
}

// at returns element i: its key, and a branch's child or a leaf's flags
// and, if withValue or the element is a bucket, its value.
func (e pageElems) at(i int, withValue bool) (key, val []byte, flags uint32, child uint64, err error) {
	b := e.p.b[pageHeaderSize+i*elemSize:]
	var pos, ksize, vsize uint64
	if e.branch {
		pos, ksize, child = uint64(ne.Uint32(b)), uint64(ne.Uint32(b[4:])), ne.Uint64(b[8:])
	} else {
		flags = ne.Uint32(b)
		pos, ksize, vsize = uint64(ne.Uint32(b[4:])), uint64(ne.Uint32(b[8:])), uint64(ne.Uint32(b[12:]))
	}
	if ksize == 0 {
		// bbolt asserts that no key is empty when it reads a page to
		// write it.
		return nil, nil, 0, 0, fmt.Errorf("element %d: an empty key", i)
	}
	start := uint64(pageHeaderSize+i*elemSize) + pos
	end := start + ksize + vsize
	if end > uint64(e.p.size) {
		return nil, nil, 0, 0, fmt.Errorf("element %d (%d bytes at %d) past the page's %d bytes", i, ksize+vsize, start, e.p.size)
	}
	if !withValue && flags&leafBucket == 0 {
		end = start + ksize
	}
	pb, err := e.p.upTo(e.r, end)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	key = pb[start : start+ksize : start+ksize]
	if end > start+ksize {
		val = pb[start+ksize : end : end]
	}
	return key, val, flags, child, nil
}

// tree checks the subtree at page id, whose keys are at least min and
// below max (nil for no bound), as bbolt's consistency check does, and
// the buckets nested in it; it returns a copy of the subtree's last key.
func (c *pageChecker) tree(id uint64, min, max []byte, depth int, bucket string, root bool) ([]byte, error) {
	if depth > maxTreeDepth {
		return nil, fmt.Errorf("%s: nested more than %d deep", bucket, maxTreeDepth)
	}
	p, err := c.page(id, depth)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bucket, err)
	}
	fail := func(err error) error { return fmt.Errorf("%s: page %d: %w", bucket, id, err) }
	e, err := elems(c.r, p)
	if err == nil && e.branch && e.n < 2 && !root {
		// bbolt asserts it when it rebalances a child of this page.
		err = errors.New("a branch of one element below the root")
	}
	if err != nil {
		return nil, fail(err)
	}
	if !e.branch {
		if e.n == 0 {
			return nil, nil
		}
		prev := min
		for i := range e.n {
			k, v, flags, _, err := e.at(i, false)
			if err == nil {
				err = keyAfter(k, prev, i, max)
			}
			if err != nil {
				return nil, fail(err)
			}
			if flags&leafBucket != 0 {
				// The nested tree reads into the buffers below: keep
				// this page's key.
				k = bytes.Clone(k)
				if err := c.bucket(v, depth+1, fmt.Sprintf("%s, bucket %q", bucket, k)); err != nil {
					return nil, err
				}
			}
			prev = k
		}
		return bytes.Clone(prev), nil
	}
	var last []byte
	running := min
	for i := range e.n {
		k, _, _, child, err := e.at(i, false)
		if err == nil {
			err = keyAfter(k, running, i, max)
		}
		next := max
		if err == nil && i < e.n-1 {
			next, _, _, _, err = e.at(i+1, false)
		}
		if err != nil {
			return nil, fail(err)
		}
		if last, err = c.tree(child, k, next, depth+1, bucket, false); err != nil {
			return nil, err
		}
		running = last
	}
	return last, nil
}

// keyAfter checks key i of a page against the key before it (or the
// page's lower bound, for the first) and the page's upper bound, as
// bbolt's verifyKeyOrder does.
func keyAfter(k, prev []byte, i int, max []byte) error {
	switch {
	case i == 0 && prev != nil && bytes.Compare(prev, k) > 0:
		return fmt.Errorf("first key %x below its parent's %x", k, prev)
	case i > 0 && bytes.Compare(prev, k) >= 0:
		return fmt.Errorf("key %d %x not above the one before, %x", i, k, prev)
	case max != nil && bytes.Compare(k, max) >= 0:
		return fmt.Errorf("key %d %x not below its parent's next key %x", i, k, max)
	}
	return nil
}

// bucket checks the value of a nested bucket: its tree, or its inline
// page.
func (c *pageChecker) bucket(v []byte, depth int, what string) error {
	if len(v) < bucketHeader {
		return fmt.Errorf("%s: a bucket header of %d bytes", what, len(v))
	}
	if root := ne.Uint64(v); root != 0 {
		_, err := c.tree(root, nil, nil, depth, what, true)
		return err
	}
	p := v[bucketHeader:]
	if len(p) < pageHeaderSize {
		return fmt.Errorf("%s: an inline bucket of %d bytes", what, len(v))
	}
	if typ := ne.Uint16(p[8:]); typ != pageLeaf {
		return fmt.Errorf("%s: an inline page of type %#x, want a leaf", what, typ)
	}
	// Its bytes are all in v: nothing is read.
	e, err := elems(nil, &pageBuf{b: p, size: int64(len(p))})
	var prev []byte
	for i := 0; err == nil && i < e.n; i++ {
		var k []byte
		var flags uint32
		if k, _, flags, _, err = e.at(i, false); err == nil {
			err = keyAfter(k, prev, i, nil)
		}
		if err == nil && flags&leafBucket != 0 {
			// bbolt never inlines a bucket that holds buckets.
			err = errors.New("a bucket in an inline bucket")
		}
		prev = k
	}
	if err != nil {
		return fmt.Errorf("%s: inline page: %w", what, err)
	}
	return nil
}
