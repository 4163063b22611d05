/* accept_wait.c - threads asleep in accept() when checkpointed, on a unix
 * listener and on a TCP one, wake when a client connects after restart
 * (the interrupted call is restarted, not lost and not failed). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "tp.h"

static int lsk[2];
static volatile int got[2] = { -1, -1 };

static void *acceptor(void *arg)
{
	long i = (long)arg;
	int fd = accept(lsk[i], NULL, NULL);
	char c = 0;

	if (fd >= 0 && read(fd, &c, 1) == 1 && c == 'x')
		got[i] = 1;
	else
		got[i] = -errno - 1000;
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct sockaddr_in in = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(in);
	pthread_t th[2];
	int c[2];

	tp_init(argc, argv);
	snprintf(un.sun_path + 1, sizeof(un.sun_path) - 1, "ckpt-accept-%d", getpid());
	lsk[0] = socket(AF_UNIX, SOCK_STREAM, 0);
	lsk[1] = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(lsk[0], (struct sockaddr *)&un, sizeof(un)) || listen(lsk[0], 4) ||
	    bind(lsk[1], (struct sockaddr *)&in, sizeof(in)) || listen(lsk[1], 4) ||
	    getsockname(lsk[1], (struct sockaddr *)&in, &len)) {
		perror("listen");
		return 1;
	}
	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, acceptor, (void *)i);
	sleep(1);	/* both asleep in accept() */
	tp_ready();
	tp_wait_go();
	c[0] = socket(AF_UNIX, SOCK_STREAM, 0);
	c[1] = socket(AF_INET, SOCK_STREAM, 0);
	tp_check(connect(c[0], (struct sockaddr *)&un, sizeof(un)) == 0 &&
		 write(c[0], "x", 1) == 1, "connect to the unix listener: %s",
		 strerror(errno));
	tp_check(connect(c[1], (struct sockaddr *)&in, sizeof(in)) == 0 &&
		 write(c[1], "x", 1) == 1, "connect to the TCP listener: %s",
		 strerror(errno));
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	tp_check(got[0] == 1, "the thread in accept() on the unix listener: %d", got[0]);
	tp_check(got[1] == 1, "the thread in accept() on the TCP listener: %d", got[1]);
	return tp_done();
}
