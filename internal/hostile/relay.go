package hostile

// ForgeRelay is what a forging relay of an all-gather of size-byte records
// passes on in place of out: every record after the first replaced by a
// copy of the first, so each slot holds another rank's genuine record. A
// block of one record goes out as it is (the relay's own, in a short last
// instance of one rank). The receiver must name the relay, not the ranks
// whose slots were forged.
func ForgeRelay(out []byte, size int) []byte {
	forged := append([]byte(nil), out...)
	for i := size; i+size <= len(forged); i += size {
		copy(forged[i:i+size], out[:size])
	}
	return forged
}
