/* The double's sockets: loopback, or the one address a test passes in. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netplugin.h"

int np_bind_addr(uint32_t *addr)
{
	const char *s = getenv("NRTABI_NETPLUGIN_ADDR");
	struct in_addr a;
	if (s == NULL || s[0] == 0)
		s = "127.0.0.1";
	if (inet_pton(AF_INET, s, &a) != 1) {
		NP_WARN("NRTABI_NETPLUGIN_ADDR %.40s is not an IPv4 address", s);
		return -1;
	}
	*addr = a.s_addr;
	return 0;
}

int np_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int np_listen_socket(uint32_t addr, uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = addr;
	socklen_t len = sizeof sa;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 64) != 0 || getsockname(fd, (struct sockaddr *)&sa, &len) != 0 ||
	    np_set_nonblock(fd) != 0) {
		(void)close(fd); /* the error being reported is the first one */
		return -1;
	}
	*port = sa.sin_port;
	return fd;
}
