package elfread

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// parseAll runs the response parser and the body reader over b as the
// client does, with a body cap of max bytes.
func parseAll(b []byte, max int64) (*httpResponse, []byte, error) {
	br := bufio.NewReaderSize(bytes.NewReader(b), httpLineMax)
	r, err := readResponse(br)
	if err != nil {
		return nil, nil, err
	}
	var body bytes.Buffer
	w := capWriter{w: &body, max: max}
	_, err = io.Copy(&w, httpBody(br, r))
	return r, body.Bytes(), err
}

var httpSeeds = []string{
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: application/octet-stream\r\n\r\nhello",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n3\r\n, w\r\n0\r\nX-Checksum: abc\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n2 \r\nab\r\n0\r\n\r\n",
	"HTTP/1.0 200 OK\r\n\r\nuntil the connection closes",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 302 Found\r\nLocation: ../../x/buildid/ab/debuginfo\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
	"HTTP/1.1 200 OK\nContent-Length: 1\n\nx",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx",
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	"HTTP/1.1 200 OK\r\n folded\r\n\r\n",
	"HTTP/2 200\r\n\r\n",
	"",
}

// FuzzHTTPResponse: any bytes from a server give a response and body or a
// one-line error, never a panic; a body is never longer than what arrived
// or the cap, and a Content-Length body is exactly that long.
func FuzzHTTPResponse(f *testing.F) {
	for _, s := range httpSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const max = 1 << 16
		r, body, err := parseAll(b, max)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if r.Status < 100 || r.Status > 999 || r.Chunked && r.Length != -1 || r.Length < -1 {
			t.Fatalf("response %+v", r)
		}
		if len(body) > len(b) || len(body) > max {
			t.Fatalf("%d-byte body from %d bytes of input", len(body), len(b))
		}
		if r.Length >= 0 && int64(len(body)) != r.Length {
			t.Fatalf("Content-Length %d, %d-byte body", r.Length, len(body))
		}
	})
}

// TestHTTPResponseRefusals: each malformed or unwanted response is refused
// with its own one-line reason, and well-formed ones decode.
func TestHTTPResponseRefusals(t *testing.T) {
	long := strings.Repeat("a", httpLineMax+10)
	manyFields := strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 40)
	for in, want := range map[string]string{
		"HTTP/2 200\r\n\r\n":                                                                        "not an HTTP/1.x status line",
		"HTTP/1.1 20 OK\r\n\r\n":                                                                    "not an HTTP/1.x status line",
		"HTTP/1.1 200OK\r\n\r\n":                                                                    "not an HTTP/1.x status line",
		"HTTP/1.1 200 OK\r\n":                                                                       "connection closed before the header line",
		"HTTP/1.1 200 OK\r\nX: " + long:                                                             "header line longer than 8192 bytes",
		"HTTP/1.1 200 OK\r\n" + manyFields:                                                          "response head over 32768 bytes",
		"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n":                                                     "obsolete line folding is refused",
		"HTTP/1.1 200 OK\r\nno colon\r\n\r\n":                                                       "without a field name and colon",
		"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n":                                                    "is not a token",
		"HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n":                                                      "control byte",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx":                       "two Content-Length values",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n":                                             "is not a length",
		"HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999999\r\n\r\n":                            "is not a length",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort":                                        "5 of 10 bytes arrived",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n":                                        "Transfer-Encoding \"gzip\" not supported",
		"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n":                                         "Content-Encoding \"gzip\" although the request asked for identity",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n":                               "is not hex",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n":                               "is not hex",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n":                 "is not 1 to 15 hex digits",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n":                                 "is not 1 to 15 hex digits",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n":               "chunk data not followed by CRLF",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc":                            "connection closed inside a chunk",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n" + manyFields:       "chunked trailers over 32768 bytes",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n":                    "connection closed before the trailer line",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;" + long:                            "chunk size line longer than 8192 bytes",
		strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 10) + "HTTP/1.1 200 OK\r\n\r\n":             "more than 8 interim (1xx) responses",
		"HTTP/1.1 101 Switching Protocols\r\n\r\n":                                                  "switched protocols",
		"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n" + strings.Repeat("x", 8):                     "over cap",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nxxxx\r\n5\r\nxxxxx\r\n0\r\n\r\n": "over cap",
	} {
		_, _, err := parseAll([]byte(in), 7)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%.60q: want one line containing %q, got %v", in, want, err)
		}
	}
	for in, want := range map[string]string{
		httpSeeds[0]: "hello",
		httpSeeds[1]: "hello, w",
		httpSeeds[2]: "ab",
		httpSeeds[3]: "until the connection closes",
		httpSeeds[4]: "ok",
		httpSeeds[7]: "x",
	} {
		r, body, err := parseAll([]byte(in), 100)
		if err != nil || string(body) != want || r.Status != 200 {
			t.Errorf("%.60q: want 200 %q, got %+v %q %v", in, want, r, body, err)
		}
	}
	r, _, err := parseAll([]byte(httpSeeds[5]), 100)
	if err != nil || !r.isRedirect() || r.Location != "../../x/buildid/ab/debuginfo" {
		t.Errorf("redirect: %+v %v", r, err)
	}
	if _, _, err := parseAll([]byte(httpSeeds[0]), 4); !errors.Is(err, errOverCap) {
		t.Errorf("a body over the cap: %v", err)
	}
}
