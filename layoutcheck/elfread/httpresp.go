package elfread

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The response parser of the debuginfod client's own HTTP/1.1 GET
// (httpget.go). What a server sends is input: every line is bounded by the
// reader's buffer, the whole head (interim 1xx heads and chunked trailers
// included) by a byte budget, and only the few values the client acts on
// are copied out of the buffer.
const (
	// httpLineMax bounds one status, header, chunk-size or trailer line;
	// it is the bufio.Reader's size, so a longer line is never buffered.
	httpLineMax = 8 << 10
	// httpHeadMax bounds a response head, or the trailers of a chunked
	// body, from the first line to the blank line.
	httpHeadMax = 32 << 10
	// chunkSizeDigits: a chunk size of more than 15 hex digits (2^60
	// bytes) is refused before it is converted; the download cap applies
	// to what arrives anyway.
	chunkSizeDigits = 15
	// interimMax: 1xx heads skipped before the final one.
	interimMax = 8
)

// httpResponse is what the client uses of a response head.
type httpResponse struct {
	Status   int
	Reason   string
	Length   int64 // Content-Length; -1 when absent or the body is chunked
	Chunked  bool
	Location string
}

// isRedirect: the statuses whose Location the client follows.
func (r *httpResponse) isRedirect() bool {
	switch r.Status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// readResponse reads a response head, skipping interim (1xx) heads.
func readResponse(br *bufio.Reader) (*httpResponse, error) {
	budget := httpHeadMax
	for range interimMax + 1 {
		r, err := readHead(br, &budget)
		if err != nil {
			return nil, err
		}
		if r.Status >= 200 || r.Status == 101 {
			if r.Status == 101 {
				return nil, errors.New("the server switched protocols (101) on a plain GET")
			}
			return r, nil
		}
	}
	return nil, fmt.Errorf("more than %d interim (1xx) responses", interimMax)
}

// readLine returns one line without its CRLF (or bare LF), charged to
// budget. The slice points into br's buffer: valid until the next read.
func readLine(br *bufio.Reader, budget *int, what string) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	*budget -= len(line)
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, fmt.Errorf("%s line longer than %d bytes", what, httpLineMax)
	case err == io.EOF && len(line) == 0:
		return nil, fmt.Errorf("connection closed before the %s line", what)
	case err == io.EOF:
		return nil, fmt.Errorf("connection closed in the middle of the %s line", what)
	case err != nil:
		return nil, err
	case *budget < 0:
		return nil, fmt.Errorf("%s over %d bytes", headWhat(what), httpHeadMax)
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func headWhat(what string) string {
	if what == "trailer" {
		return "chunked trailers"
	}
	return "response head"
}

// readHead parses one status line and its header fields.
func readHead(br *bufio.Reader, budget *int) (*httpResponse, error) {
	line, err := readLine(br, budget, "status")
	if err != nil {
		return nil, err
	}
	r := &httpResponse{Length: -1}
	// HTTP/1.x SP 3DIGIT [SP reason]
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || !isDigit(line[7]) || line[8] != ' ' ||
		!isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) || len(line) > 12 && line[12] != ' ' || line[9] == '0' {
		return nil, fmt.Errorf("not an HTTP/1.x status line: %s", quoteShort(line))
	}
	r.Status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	if len(line) > 13 {
		if bad := badFieldByte(line[13:]); bad >= 0 {
			return nil, fmt.Errorf("control byte in the status line: %s", quoteShort(line))
		}
		r.Reason = string(line[13:])
	}
	err = readFields(br, budget, "header", func(name, value []byte) error {
		switch {
		case asciiFold(name, "Content-Length"):
			n, err := parseLength(value)
			if err != nil {
				return err
			}
			if r.Length >= 0 && r.Length != n {
				return fmt.Errorf("two Content-Length values (%d and %d)", r.Length, n)
			}
			r.Length = n
		case asciiFold(name, "Transfer-Encoding"):
			if !asciiFold(value, "chunked") || r.Chunked {
				return fmt.Errorf("Transfer-Encoding %s not supported (chunked only)", quoteShort(value))
			}
			r.Chunked = true
		case asciiFold(name, "Content-Encoding"):
			if !asciiFold(value, "identity") {
				return fmt.Errorf("Content-Encoding %s although the request asked for identity", quoteShort(value))
			}
		case asciiFold(name, "Location"):
			if r.Location != "" {
				return errors.New("two Location fields")
			}
			r.Location = string(value)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.Chunked {
		// A chunked body's length is what the chunks say (RFC 9112 6.3).
		r.Length = -1
	}
	return r, nil
}

// readFields reads header (or trailer) fields up to the blank line, calling
// field on each; name and value point into br's buffer.
func readFields(br *bufio.Reader, budget *int, what string, field func(name, value []byte) error) error {
	for {
		line, err := readLine(br, budget, what)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			return fmt.Errorf("folded %s line (obsolete line folding is refused): %s", what, quoteShort(line))
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return fmt.Errorf("%s line without a field name and colon: %s", what, quoteShort(line))
		}
		name := line[:colon]
		for _, c := range name {
			if !isTokenByte(c) {
				return fmt.Errorf("%s field name %s is not a token", what, quoteShort(name))
			}
		}
		value := bytes.Trim(line[colon+1:], " \t")
		if badFieldByte(value) >= 0 {
			return fmt.Errorf("control byte in the %s field %s", what, quoteShort(name))
		}
		if err := field(name, value); err != nil {
			return err
		}
	}
}

// parseLength: a Content-Length of 1 to 18 digits (under 2^63).
func parseLength(v []byte) (int64, error) {
	if len(v) == 0 || len(v) > 18 {
		return 0, fmt.Errorf("Content-Length %s is not a length", quoteShort(v))
	}
	var n int64
	for _, c := range v {
		if !isDigit(c) {
			return 0, fmt.Errorf("Content-Length %s is not a length", quoteShort(v))
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// httpBody is the body's reader: chunked, of a Content-Length, or up to the
// end of the connection (the request says Connection: close).
func httpBody(br *bufio.Reader, r *httpResponse) io.Reader {
	switch {
	case r.Chunked:
		return &chunkedReader{br: br}
	case r.Length >= 0:
		return &lengthReader{r: br, left: r.Length, want: r.Length}
	}
	return br
}

// errShortBody: the connection ended before the Content-Length arrived.
type errShortBody struct{ got, want int64 }

func (e errShortBody) Error() string {
	return fmt.Sprintf("%d of %d bytes arrived", e.got, e.want)
}

// lengthReader reads exactly left bytes; an earlier end is errShortBody.
type lengthReader struct {
	r          io.Reader
	left, want int64
}

func (l *lengthReader) Read(b []byte) (int, error) {
	if l.left == 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > l.left {
		b = b[:l.left]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	if err == io.EOF && l.left > 0 {
		return n, errShortBody{l.want - l.left, l.want}
	}
	if l.left == 0 && err == io.EOF {
		err = nil
	}
	return n, err
}

// chunkedReader decodes Transfer-Encoding: chunked (RFC 9112 7.1): size
// lines of at most chunkSizeDigits hex digits (extensions ignored), CRLF
// after each chunk's data, trailers up to the blank line after the last
// chunk, bounded like a head.
type chunkedReader struct {
	br      *bufio.Reader
	left    int64 // bytes left in the current chunk
	started bool  // a chunk has been read: its data must end in CRLF
	done    bool
	budget  int // for the trailers
}

func (c *chunkedReader) Read(b []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		if err := c.next(); err != nil {
			return 0, err
		}
		if c.done {
			return 0, io.EOF
		}
	}
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	n, err := c.br.Read(b)
	c.left -= int64(n)
	if err == io.EOF {
		return n, errors.New("chunked body: connection closed inside a chunk")
	}
	return n, err
}

// next reads the CRLF ending the previous chunk and the next size line;
// after the last chunk, the trailers.
func (c *chunkedReader) next() error {
	budget := httpLineMax + 2
	if c.started {
		line, err := readLine(c.br, &budget, "chunk end")
		if err != nil {
			return fmt.Errorf("chunked body: %w", err)
		}
		if len(line) != 0 {
			return errors.New("chunked body: chunk data not followed by CRLF")
		}
	}
	c.started = true
	line, err := readLine(c.br, &budget, "chunk size")
	if err != nil {
		return fmt.Errorf("chunked body: %w", err)
	}
	size := line
	if i := bytes.IndexByte(size, ';'); i >= 0 {
		size = size[:i]
	}
	size = bytes.TrimRight(size, " \t")
	if len(size) == 0 || len(size) > chunkSizeDigits {
		return fmt.Errorf("chunked body: chunk size line %s is not 1 to %d hex digits", quoteShort(line), chunkSizeDigits)
	}
	n, err := strconv.ParseInt(string(size), 16, 64)
	if err != nil || n < 0 || size[0] == '+' || size[0] == '-' {
		return fmt.Errorf("chunked body: chunk size line %s is not hex", quoteShort(line))
	}
	if n > 0 {
		c.left = n
		return nil
	}
	c.budget = httpHeadMax
	if err := readFields(c.br, &c.budget, "trailer", func(_, _ []byte) error { return nil }); err != nil {
		return fmt.Errorf("chunked body: %w", err)
	}
	c.done = true
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isTokenByte: RFC 9110 tchar.
func isTokenByte(c byte) bool {
	if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		return true
	}
	return c != 0 && bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}

// badFieldByte is the index of a control byte other than HTAB, or -1.
func badFieldByte(v []byte) int {
	for i, c := range v {
		if c < ' ' && c != '\t' || c == 0x7f {
			return i
		}
	}
	return -1
}

// asciiFold compares an ASCII field name or token case-insensitively.
func asciiFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// quoteShort quotes at most 60 bytes of what a server sent, so an error
// stays one short line.
func quoteShort(b []byte) string {
	if len(b) > 60 {
		return strconv.Quote(string(b[:60])) + "..."
	}
	return strconv.Quote(string(b))
}
