/*
 * measure: run a command and report its wall time and its own peak RSS.
 *
 *   measure PROG [ARG]...   prints "WALL_NS MAXRSS_KB CPU_NS" on fd 3, exits
 *                           with the command's status (128+N on signal N)
 *
 * MAXRSS_KB and CPU_NS are wait4's rusage of the child, which Linux fills
 * with the child's own usage and that of every descendant it waited for
 * (RUSAGE_BOTH): for `xargs -P 2 pahole ...` the peak is the largest single
 * pahole's and the CPU time the sum of all of them.
 *
 * Why it exists: a process that a large parent starts with vfork (as Go's
 * os/exec does) inherits the parent's peak RSS in its rusage, so wait4 in
 * the bench would report at least the bench's own size. This small program
 * forks (a copy of itself, about a megabyte) and reports the child's rusage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid, got;
	FILE *report;

	if (argc < 2) {
		fprintf(stderr, "usage: measure PROG [ARG]...\n");
		return 2;
	}
	report = fdopen(3, "w");
	if (report == NULL) {
		fprintf(stderr, "measure: fd 3 is not open for the report: %s\n", strerror(errno));
		return 2;
	}
	if (clock_gettime(CLOCK_MONOTONIC, &t0) != 0) {
		perror("measure: clock_gettime");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("measure: fork");
		return 2;
	}
	if (pid == 0) {
		if (close(3) != 0)
			_exit(127);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "measure: exec %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	do {
		got = wait4(pid, &status, 0, &ru);
	} while (got < 0 && errno == EINTR);
	if (got < 0) {
		perror("measure: wait4");
		return 2;
	}
	if (clock_gettime(CLOCK_MONOTONIC, &t1) != 0) {
		perror("measure: clock_gettime");
		return 2;
	}
	if (fprintf(report, "%lld %ld %lld\n",
		    (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec),
		    ru.ru_maxrss,
		    ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
			    ((long long)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL) < 0 ||
	    fclose(report) != 0) {
		perror("measure: report");
		return 2;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
