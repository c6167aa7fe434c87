/*
 * The frames a ring link carries, by framing (docs/bootstrap-hierarchy.md#abort-frames):
 * ring data ({int size} in the default framing, {RING_DATA, length} in the
 * extended one) and the abort that says why a rank is leaving a world: in
 * the default framing a frame whose size is BOOTSTRAP_FRAME_ABORT, then
 * bootstrap_abort_info and its text; in the extended one the ABORT message
 * with the text. An abort is the peer's: its magic and length are checked
 * and its text is escaped wherever it is shown. step.c moves the frames;
 * abort.c sends the abort.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "nccom.h"

const char *nccom_phase_name(uint32_t phase)
{
	/* The names runtime/transport/tcp gives them (PhaseName). */
	switch (phase) {
	case BOOTSTRAP_PHASE_WIRING:
		return "ring wiring";
	case BOOTSTRAP_PHASE_FLAT_RING:
		return "flat ring all-gather";
	case BOOTSTRAP_PHASE_INTRA_RING:
		return "intra ring all-gather";
	case BOOTSTRAP_PHASE_INTER_RING:
		return "inter ring all-gather (leaders)";
	case BOOTSTRAP_PHASE_DOWN:
		return "down phase (one frame down the instance)";
	case BOOTSTRAP_PHASE_ROOT:
		return "root exchange";
	case BOOTSTRAP_PHASE_PEER:
		return "point-to-point send / receive after the gather";
	}
	return "an unknown phase";
}

size_t nccom_frame_header_size(void)
{
	return nccom_extended() ? sizeof(struct bootstrap_msg_header) : sizeof(struct bootstrap_frame_size);
}

size_t nccom_frame_header(size_t len, unsigned char *out)
{
	if (nccom_extended()) {
		struct bootstrap_msg_header h = {.type = BOOTSTRAP_MSG_RING_DATA, .length = (uint32_t)len};
		memcpy(out, &h, sizeof h);
		return sizeof h;
	}
	struct bootstrap_frame_size f = {.size = (int)len};
	memcpy(out, &f, sizeof f);
	return sizeof f;
}

/* Exactly n bytes by d, quietly: the callers say what failed. 1 done, 0 the
 * peer closed (*err 0) or reset (*err errno), -1 out of time. */
static int get(int fd, void *buf, size_t n, nccom_deadline d, int *err)
{
	char *p = buf;
	*err = 0;
	while (n > 0) {
		ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			*err = errno;
			return 0;
		}
		struct pollfd q = {.fd = fd, .events = POLLIN};
		int left = nccom_left_ms(d);
		if (left == 0 || (poll(&q, 1, left) < 0 && errno != EINTR))
			return -1;
	}
	return 1;
}

/* The header in hdr opens an abort: 1 read whole into ab, 0 an abort that
 * is cut short or malformed (what, in ab->text), -1 not an abort. */
static int read_abort(int fd, const unsigned char *hdr, struct nccom_abort *ab, nccom_deadline d)
{
	int e = 0;
	memset(&ab->info, 0, sizeof ab->info);
	ab->info.dead_rank = ab->info.reporter = ab->info.step = -1;
	if (nccom_extended()) {
		struct bootstrap_msg_header h;
		memcpy(&h, hdr, sizeof h);
		if (h.type != BOOTSTRAP_MSG_ABORT)
			return -1;
		ab->len = h.length;
	} else {
		struct bootstrap_frame_size f;
		memcpy(&f, hdr, sizeof f);
		if (f.size != BOOTSTRAP_FRAME_ABORT)
			return -1;
		if (get(fd, &ab->info, sizeof ab->info, d, &e) != 1) {
			snprintf(ab->text, sizeof ab->text, "an abort frame cut short");
			return 0;
		}
		if (ab->info.sanity != BOOTSTRAP_SANITY) {
			snprintf(ab->text, sizeof ab->text, "an abort frame with magic %#08x, expected %#08x: not a bootstrap peer of this release", ab->info.sanity,
				 BOOTSTRAP_SANITY);
			return 0;
		}
		ab->len = ab->info.text_len;
	}
	if (ab->len > BOOTSTRAP_ABORT_TEXT_MAX) {
		snprintf(ab->text, sizeof ab->text, "an abort of %u bytes of text (at most %u): not a bootstrap peer of this release", ab->len,
			 BOOTSTRAP_ABORT_TEXT_MAX);
		return 0;
	}
	if (get(fd, ab->text, ab->len, d, &e) != 1) {
		snprintf(ab->text, sizeof ab->text, "an abort whose text was cut short");
		return 0;
	}
	ab->text[ab->len] = 0;
	return 1;
}

int nccom_frame_check(int fd, const unsigned char *hdr, size_t want, struct nccom_abort *ab)
{
	if (nccom_extended()) {
		struct bootstrap_msg_header h;
		memcpy(&h, hdr, sizeof h);
		if (h.type == BOOTSTRAP_MSG_RING_DATA && h.length == (uint32_t)want)
			return 0;
		int a = read_abort(fd, hdr, ab, nccom_now_ms() + NCCOM_ABORT_WAIT_MS);
		if (a < 0 && h.type == BOOTSTRAP_MSG_RING_DATA)
			snprintf(ab->text, sizeof ab->text, "a %u-byte RING_DATA where RING_DATA (%zu bytes) was due", h.length, want);
		else if (a < 0)
			snprintf(ab->text, sizeof ab->text, "a %u-byte message of type %u where RING_DATA (%zu bytes) was due", h.length, h.type, want);
		return a > 0 ? 1 : -1;
	}
	struct bootstrap_frame_size f;
	memcpy(&f, hdr, sizeof f);
	if (f.size >= 0 && (size_t)f.size == want)
		return 0;
	int a = read_abort(fd, hdr, ab, nccom_now_ms() + NCCOM_ABORT_WAIT_MS);
	if (a < 0)
		snprintf(ab->text, sizeof ab->text, "a %d-byte frame where %zu bytes were due", f.size, want);
	return a > 0 ? 1 : -1;
}

int nccom_frame_find_abort(int fd, struct nccom_abort *ab, int *err)
{
	/* What a peer that was a step ahead sent before it went is passed
	 * over, within a bound of bytes and time (the gather fails anyway). */
	nccom_deadline d = nccom_now_ms() + NCCOM_ABORT_WAIT_MS;
	size_t skipped = 0;
	*err = 0;
	for (;;) {
		unsigned char hdr[NCCOM_FRAME_HEADER_MAX];
		int g = get(fd, hdr, nccom_frame_header_size(), d, err);
		if (g < 0)
			snprintf(ab->text, sizeof ab->text, "no whole frame within %d ms after %zu bytes of ring data", NCCOM_ABORT_WAIT_MS, skipped);
		if (g <= 0)
			return g;
		int a = read_abort(fd, hdr, ab, d);
		if (a >= 0)
			return a > 0 ? 1 : -1;
		size_t len;
		if (nccom_extended()) {
			struct bootstrap_msg_header h;
			memcpy(&h, hdr, sizeof h);
			len = h.length;
			if (h.type != BOOTSTRAP_MSG_RING_DATA) {
				snprintf(ab->text, sizeof ab->text, "a %zu-byte message of type %u", len, h.type);
				return -1;
			}
		} else {
			struct bootstrap_frame_size f;
			memcpy(&f, hdr, sizeof f);
			if (f.size < 0) {
				snprintf(ab->text, sizeof ab->text, "a frame of size %d", f.size);
				return -1;
			}
			len = (size_t)f.size;
		}
		if (len > NCCOM_ABORT_SKIP_MAX - skipped) {
			snprintf(ab->text, sizeof ab->text, "more than %zu bytes of ring data", NCCOM_ABORT_SKIP_MAX);
			return -1;
		}
		skipped += len;
		char sink[4096];
		while (len > 0) {
			size_t n = len < sizeof sink ? len : sizeof sink;
			if ((g = get(fd, sink, n, d, err)) < 0)
				snprintf(ab->text, sizeof ab->text, "a frame of ring data cut short");
			if (g <= 0)
				return g;
			len -= n;
		}
	}
}

int nccom_frame_read_abort_body(int fd, struct nccom_abort *ab)
{
	unsigned char hdr[NCCOM_FRAME_HEADER_MAX];
	struct bootstrap_frame_size f = {.size = BOOTSTRAP_FRAME_ABORT};
	memcpy(hdr, &f, sizeof f);
	return read_abort(fd, hdr, ab, nccom_now_ms() + NCCOM_ABORT_WAIT_MS) > 0;
}

bool nccom_frame_send_abort(int fd, const struct nccom_abort *ab)
{
	unsigned char buf[sizeof(struct bootstrap_frame_size) + sizeof(struct bootstrap_abort_info) + BOOTSTRAP_ABORT_TEXT_MAX];
	uint32_t len = ab->len <= BOOTSTRAP_ABORT_TEXT_MAX ? ab->len : BOOTSTRAP_ABORT_TEXT_MAX;
	size_t n = 0;
	if (nccom_extended()) {
		struct bootstrap_msg_header h = {.type = BOOTSTRAP_MSG_ABORT, .length = len};
		memcpy(buf, &h, sizeof h);
		n = sizeof h;
	} else {
		struct bootstrap_frame_size f = {.size = BOOTSTRAP_FRAME_ABORT};
		struct bootstrap_abort_info info = ab->info;
		info.text_len = len;
		memcpy(buf, &f, sizeof f);
		memcpy(buf + sizeof f, &info, sizeof info);
		n = sizeof f + sizeof info;
	}
	memcpy(buf + n, ab->text, len);
	n += len;
	nccom_deadline d = nccom_now_ms() + NCCOM_ABORT_WAIT_MS;
	size_t done = 0;
	while (done < n) {
		ssize_t k = send(fd, buf + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0) {
			done += (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return false;
		struct pollfd q = {.fd = fd, .events = POLLOUT};
		int left = nccom_left_ms(d);
		if (left == 0 || (poll(&q, 1, left) < 0 && errno != EINTR))
			return false;
	}
	return true;
}
