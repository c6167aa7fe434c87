package debuginfod

import "crypto/x509"

// TrustForTest makes c trust the certificates in pool instead of the
// system's: the tests' TLS servers have their own.
func (c *Client) TrustForTest(pool *x509.CertPool) { c.rootCAs = pool }
