/*
 * The frames a ring link carries, by framing (docs/bootstrap-hierarchy.md#failure):
 * ring data ({int size} in the default framing, {RING_DATA, length} in the
 * extended one) and the ABORT that says why a rank is leaving a world
 * ({ABORT, length} text in the extended framing; in the default one a frame
 * whose size is NCCOM_ABORT_FRAME, then {u32 length} text). step.c moves
 * them; abort.c sends the ABORT.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "nccom.h"

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

/* An ABORT's text after its header announced len bytes: 1 read, else 0. */
static int abort_text(int fd, uint32_t len, char *text, size_t cap, nccom_deadline d)
{
	int e = 0;
	if (len > BOOTSTRAP_ABORT_TEXT_MAX || len >= cap || get(fd, text, len, d, &e) != 1)
		return 0;
	text[len] = 0;
	return 1;
}

/* The header in hdr is an ABORT: its text into text. 1 when whole, -1 not an ABORT, 0 an ABORT cut short. */
static int header_abort(int fd, const unsigned char *hdr, char *text, size_t cap, nccom_deadline d)
{
	if (nccom_extended()) {
		struct bootstrap_msg_header h;
		memcpy(&h, hdr, sizeof h);
		if (h.type != BOOTSTRAP_MSG_ABORT)
			return -1;
		return abort_text(fd, h.length, text, cap, d);
	}
	struct bootstrap_frame_size f;
	memcpy(&f, hdr, sizeof f);
	if (f.size != NCCOM_ABORT_FRAME)
		return -1;
	uint32_t len = 0;
	int e = 0;
	if (get(fd, &len, sizeof len, d, &e) != 1)
		return 0;
	return abort_text(fd, len, text, cap, d);
}

int nccom_frame_check(int fd, const unsigned char *hdr, size_t want, char *text, size_t cap)
{
	if (nccom_extended()) {
		struct bootstrap_msg_header h;
		memcpy(&h, hdr, sizeof h);
		if (h.type == BOOTSTRAP_MSG_RING_DATA && h.length == (uint32_t)want)
			return 0;
	} else {
		struct bootstrap_frame_size f;
		memcpy(&f, hdr, sizeof f);
		if (f.size >= 0 && (size_t)f.size == want)
			return 0;
	}
	int a = header_abort(fd, hdr, text, cap, nccom_now_ms() + NCCOM_ABORT_WAIT_MS);
	if (a == 0)
		snprintf(text, cap, "an ABORT cut short");
	return a >= 0 ? 1 : -1;
}

int nccom_frame_find_abort(int fd, char *text, size_t cap, int *err)
{
	/* What a peer that was a step ahead sent before it went is passed
	 * over, within a bound of bytes and time (the gather fails anyway). */
	nccom_deadline d = nccom_now_ms() + NCCOM_ABORT_WAIT_MS;
	size_t skipped = 0;
	*err = 0;
	for (;;) {
		unsigned char hdr[NCCOM_FRAME_HEADER_MAX];
		size_t hl = nccom_frame_header_size();
		int g = get(fd, hdr, hl, d, err);
		if (g < 0)
			snprintf(text, cap, "no whole frame within %d ms after %zu bytes of ring data", NCCOM_ABORT_WAIT_MS, skipped);
		if (g <= 0)
			return g < 0 ? -1 : 0;
		int a = header_abort(fd, hdr, text, cap, d);
		if (a > 0)
			return 1;
		if (a == 0) {
			snprintf(text, cap, "an ABORT cut short");
			return 1;
		}
		size_t len;
		if (nccom_extended()) {
			struct bootstrap_msg_header h;
			memcpy(&h, hdr, sizeof h);
			len = h.length;
			if (h.type != BOOTSTRAP_MSG_RING_DATA) {
				snprintf(text, cap, "a message of type %u (%zu bytes)", h.type, len);
				return -1;
			}
		} else {
			struct bootstrap_frame_size f;
			memcpy(&f, hdr, sizeof f);
			if (f.size < 0) {
				snprintf(text, cap, "a frame of size %d", f.size);
				return -1;
			}
			len = (size_t)f.size;
		}
		if (len > NCCOM_ABORT_SKIP_MAX - skipped) {
			snprintf(text, cap, "more than %zu bytes of ring data", NCCOM_ABORT_SKIP_MAX);
			return -1;
		}
		skipped += len;
		char sink[4096];
		while (len > 0) {
			size_t n = len < sizeof sink ? len : sizeof sink;
			if ((g = get(fd, sink, n, d, err)) < 0)
				snprintf(text, cap, "a frame of ring data cut short");
			if (g <= 0)
				return g < 0 ? -1 : 0;
			len -= n;
		}
	}
}

bool nccom_frame_send_abort(int fd, const char *text)
{
	uint32_t len = (uint32_t)strnlen(text, BOOTSTRAP_ABORT_TEXT_MAX);
	unsigned char buf[sizeof(struct bootstrap_msg_header) + sizeof(uint32_t) + BOOTSTRAP_ABORT_TEXT_MAX];
	size_t n = 0;
	if (nccom_extended()) {
		struct bootstrap_msg_header h = {.type = BOOTSTRAP_MSG_ABORT, .length = len};
		memcpy(buf, &h, sizeof h);
		n = sizeof h;
	} else {
		struct bootstrap_frame_size f = {.size = NCCOM_ABORT_FRAME};
		memcpy(buf, &f, sizeof f);
		memcpy(buf + sizeof f, &len, sizeof len);
		n = sizeof f + sizeof len;
	}
	memcpy(buf + n, text, len);
	n += len;
	/* Briefly: a peer that does not read is not waited for. */
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
