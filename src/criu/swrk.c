/* swrk.c - `ckpt swrk FD`: CRIU's RPC served on the SOCK_SEQPACKET
 * socket FD, as runc starts `criu swrk 3`: a request, its notifications
 * answered by the client, a response; until the client closes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../include/ckpt.h"
#include "criu.h"
#include "../fdpass.h"
#include "rpc.h"

#define MSG_MAX	(128 << 10)	/* a request larger than this is refused */

struct swrk {
	int sk;
	pid_t peer;
	uint8_t *buf;
};

/* One message: its length, 0 at the end, or -errno (-EMSGSIZE: too
 * long).  fds passed with it are closed: none is expected. */
static ssize_t receive(struct swrk *s)
{
	unsigned int nfd = 0;
	ssize_t n = fd_recv(s->sk, s->buf, MSG_MAX, MSG_TRUNC, NULL, &nfd);

	if (n > MSG_MAX)
		return -EMSGSIZE;
	return n;
}

/* A response, with @fd (SCM_RIGHTS) if >= 0. */
static int send_resp_fd(struct swrk *s, const CriuResp *r, int fd)
{
	size_t len = criu_resp__get_packed_size(r);
	uint8_t *buf = len <= MSG_MAX ? malloc(len ? len : 1) : NULL;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	criu_resp__pack(r, buf);
	if (fd_send(s->sk, buf, len, &fd, fd >= 0, MSG_NOSIGNAL) != (ssize_t)len)
		ret = -errno;
	free(buf);
	return ret;
}

static int send_resp(struct swrk *s, const CriuResp *r)
{
	return send_resp_fd(s, r, -1);
}

static int send_error(struct swrk *s, CriuReqType type, int err, const char *msg)
{
	CriuResp r = CRIU_RESP__INIT;

	r.type = type;
	r.success = 0;
	r.has_cr_errno = 1;
	r.cr_errno = err;
	r.cr_errmsg = (char *)msg;
	return send_resp(s, &r);
}

/* The next request: 0 and *@req, 1 at the end, or -errno (a malformed
 * one answered with an error first). */
/* The next message, unanswered: 0, 1 at the end, or -errno. */
static int receive_request(struct swrk *s, CriuReq **req)
{
	ssize_t n = receive(s);

	if (n <= 0)
		return n ? n : 1;
	*req = criu_req__unpack(NULL, n, s->buf);
	return *req ? 0 : -EBADMSG;
}

/* A request: one that cannot be read is answered with an error here. */
static int next_request(struct swrk *s, CriuReq **req)
{
	int ret = receive_request(s, req);

	if (ret == -EMSGSIZE)
		send_error(s, CRIU_REQ_TYPE__EMPTY, EMSGSIZE, "request too long");
	else if (ret == -EBADMSG)
		send_error(s, CRIU_REQ_TYPE__EMPTY, EBADMSG,
			   "malformed request: not a criu_req message (truncated, or with a required field missing)");
	return ret;
}

/* NOTIFY SCRIPT (with @fd), then the client's answer: 0 when it
 * succeeded. */
static int notify(struct criu_job *j, const char *script, pid_t pid, int fd)
{
	struct swrk *s = j->notify_arg;
	CriuResp r = CRIU_RESP__INIT;
	CriuNotify n = CRIU_NOTIFY__INIT;
	CriuReq *req = NULL;
	int ret;

	n.script = (char *)script;
	n.has_pid = pid > 0;
	n.pid = pid;
	r.type = CRIU_REQ_TYPE__NOTIFY;
	r.success = 1;
	r.notify = &n;
	ret = send_resp_fd(s, &r, fd);
	/* a bad answer is the job's failure, answered once, by the job */
	if (!ret)
		ret = receive_request(s, &req);
	if (ret)
		return ret > 0 ? -ECONNRESET : ret;
	if (req->type != CRIU_REQ_TYPE__NOTIFY || !req->has_notify_success || !req->notify_success)
		ret = -ECANCELED;
	criu_req__free_unpacked(req, NULL);
	return ret;
}

static int version(struct swrk *s)
{
	CriuResp r = CRIU_RESP__INIT;
	CriuVersion v = CRIU_VERSION__INIT;

	v.major_number = CRIU_DROPIN_MAJOR;
	v.minor_number = CRIU_DROPIN_MINOR;
	v.name = "ckpt " CKPT_VERSION_STRING;
	r.type = CRIU_REQ_TYPE__VERSION;
	r.success = 1;
	r.version = &v;
	return send_resp(s, &r);
}

/* Memory tracking (pre-dump) is "yes"; lazy pages and a pidfd store
 * are "no". */
static int features(struct swrk *s, const CriuReq *req)
{
	CriuResp r = CRIU_RESP__INIT;
	CriuFeatures f = CRIU_FEATURES__INIT;
	const CriuFeatures *q = req->features;

	f.has_mem_track = q && q->has_mem_track;
	f.mem_track = f.has_mem_track;
	f.has_lazy_pages = q && q->has_lazy_pages;
	f.has_pidfd_store = q && q->has_pidfd_store;
	r.type = CRIU_REQ_TYPE__FEATURE_CHECK;
	r.success = 1;
	r.features = &f;
	return send_resp(s, &r);
}

static int simple(struct swrk *s, CriuReqType type)
{
	CriuResp r = CRIU_RESP__INIT;

	r.type = type;
	r.success = 1;
	return send_resp(s, &r);
}

/* DUMP, PRE_DUMP or RESTORE in @j: 0 when it was done and said so.  A
 * pre-dump is a checkpoint that leaves the tree running and tracks its
 * memory from then on (--track-mem), for a DUMP with parent_img. */
static int run_job(struct swrk *s, const CriuReq *req, struct criu_job *j)
{
	bool pre = req->type == CRIU_REQ_TYPE__PRE_DUMP ||
		   req->type == CRIU_REQ_TYPE__SINGLE_PRE_DUMP;
	bool dump = req->type == CRIU_REQ_TYPE__DUMP || pre;
	CriuResp r = CRIU_RESP__INIT;
	CriuDumpResp d = CRIU_DUMP_RESP__INIT;
	CriuRestoreResp rr = CRIU_RESTORE_RESP__INIT;
	int ret;

	if (!req->opts)
		ret = criu_fail(j, EINVAL, "%s without opts", dump ? "DUMP" : "RESTORE");
	else
		ret = rpc_job(j, req->opts, s->peer, dump);
	if (!ret && req->opts->has_notify_scripts && req->opts->notify_scripts)
		j->notify = notify;
	if (pre)
		j->flags = (j->flags & ~CKPT_KILL) | CKPT_TRACK_MEM;
	if (!ret)
		ret = dump ? criu_dump(j) : criu_restore(j);
	if (ret < 0) {
		if (j->logfd != 2)
			dprintf(j->logfd, "ckpt: %s failed: %s\n", dump ? "dump" : "restore", j->msg);
		return send_error(s, req->type, j->err, j->msg) ? -EIO : -j->err;
	}
	r.type = req->type;
	r.success = 1;
	if (dump) {
		r.dump = &d;
	} else {
		rr.pid = ret;
		r.restore = &rr;
	}
	return send_resp(s, &r);
}

static int job(struct swrk *s, const CriuReq *req)
{
	struct criu_job *j = calloc(1, sizeof(*j));
	int ret;

	if (!j) {
		send_error(s, req->type, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	j->images_dir = -1;
	j->logfd = 2;
	j->notify_arg = s;
	ret = run_job(s, req, j);
	if (j->images_dir >= 0)
		close(j->images_dir);
	if (j->logfd != 2)
		close(j->logfd);
	free(j);
	return ret;
}

static int serve(struct swrk *s, const CriuReq *req)
{
	switch (req->type) {
	case CRIU_REQ_TYPE__VERSION:
		return version(s);
	case CRIU_REQ_TYPE__CHECK:
		return simple(s, CRIU_REQ_TYPE__CHECK);
	case CRIU_REQ_TYPE__FEATURE_CHECK:
		return features(s, req);
	case CRIU_REQ_TYPE__DUMP:
	case CRIU_REQ_TYPE__RESTORE:
	case CRIU_REQ_TYPE__PRE_DUMP:
	case CRIU_REQ_TYPE__SINGLE_PRE_DUMP:
		return job(s, req);
	default:
		send_error(s, req->type, EOPNOTSUPP, "request type not supported by ckpt");
		return -EOPNOTSUPP;
	}
}

/* Exit: 0 when every request was served, 1 when one failed (the client
 * had its error response), 2 usage. */
int criu_swrk(int argc, char **argv)
{
	struct swrk s = { .sk = -1 };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char *end;
	long fd;
	int ret, failed = 0;

	fd = argc == 2 ? strtol(argv[1], &end, 10) : -1;
	if (argc != 2 || *end || fd < 0 || fd > 0x7fffffff) {
		fputs("usage: ckpt swrk FD   (CRIU's RPC on the SOCK_SEQPACKET socket FD)\n", stderr);
		return 2;
	}
	s.sk = fd;
	if (getsockopt(s.sk, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		fprintf(stderr, "ckpt swrk: fd %d: %s\n", s.sk, strerror(errno));
		return 1;
	}
	s.peer = cred.pid;
	s.buf = malloc(MSG_MAX);
	if (!s.buf) {
		perror("ckpt swrk");
		return 1;
	}
	for (;;) {
		CriuReq *req = NULL;

		ret = next_request(&s, &req);
		if (ret)
			break;
		if (serve(&s, req))
			failed = 1;
		criu_req__free_unpacked(req, NULL);
	}
	free(s.buf);
	close(s.sk);
	if (ret < 0 && ret != -ECONNRESET)
		failed = 1;
	return failed;
}
